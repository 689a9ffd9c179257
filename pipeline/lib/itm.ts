/**
 * Irish Transverse Mercator (EPSG:2157) ↔ WGS84 (EPSG:4326), with proj4. The planning export
 * publishes ITM eastings and northings; releases and the API publish WGS84 longitude/latitude.
 */
import proj4 from 'proj4';

const ITM =
  '+proj=tmerc +lat_0=53.5 +lon_0=-8 +k=0.99982 +x_0=600000 +y_0=750000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs';
const toWgs = proj4(ITM, 'EPSG:4326');

/** Bounds of the island of Ireland in WGS84, used to reject coordinates that cannot be right. */
export const IRELAND_BOUNDS = { minLon: -10.8, minLat: 51.3, maxLon: -5.3, maxLat: 55.5 } as const;

/** Convert an ITM easting/northing (metres) to WGS84 `{ lon, lat }` rounded to 6 decimals. */
export function itmToWgs84(easting: number, northing: number): { lon: number; lat: number } {
  const [lon, lat] = toWgs.forward([easting, northing]) as [number, number];
  return { lon: round6(lon), lat: round6(lat) };
}

/** Convert WGS84 lon/lat to ITM metres rounded to 0.1 m (the generator writes ITM). */
export function wgs84ToItm(lon: number, lat: number): { easting: number; northing: number } {
  const [e, n] = toWgs.inverse([lon, lat]) as [number, number];
  return { easting: Math.round(e * 10) / 10, northing: Math.round(n * 10) / 10 };
}

/** True when the point lies within the island of Ireland's bounding box. */
export function inIreland(lon: number, lat: number): boolean {
  return (
    lon >= IRELAND_BOUNDS.minLon &&
    lon <= IRELAND_BOUNDS.maxLon &&
    lat >= IRELAND_BOUNDS.minLat &&
    lat <= IRELAND_BOUNDS.maxLat
  );
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
