/**
 * Irish Transverse Mercator (EPSG:2157) as a proj4 definition, shared by the pipeline (which reads
 * ITM eastings and northings from the planning export) and the API (which answers OGC requests in
 * ITM). GRS80 with a null datum shift: ITM is defined on ETRS89, which equals WGS 84 to the
 * metre here.
 */
export const ITM_PROJ4 =
  '+proj=tmerc +lat_0=53.5 +lon_0=-8 +k=0.99982 +x_0=600000 +y_0=750000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs';
