/**
 * Where each planning authority's land is: the grid cells of `common/authority-land.json`, read by
 * common/land.ts (moved there so the account area's map can draw the same land without importing
 * pipeline/; this module re-exports it for the generator). The generator draws coordinates from
 * these cells, so no generated application lies in the sea or in the next county.
 *
 * The file is derived offline from a county-boundary GeoJSON by `land-build.ts` (how, there).
 */
export {
  LAND_GRID,
  LAND_FILE,
  authorityLand,
  landIndex,
  cellOf,
  cellCorner,
  onAuthorityLand,
  type Land,
} from '../../common/land.ts';

/**
 * The authority a polygon of the pre-2014 county boundaries belongs to (today's 31 authorities:
 * Limerick and Waterford city and county merged, North and South Tipperary merged).
 */
export function authorityOfBoundary(name: string): string {
  if (name === 'Limerick City' || name === 'Limerick County') return 'Limerick';
  if (name === 'Waterford City' || name === 'Waterford County') return 'Waterford';
  if (name === 'North Tipperary' || name === 'South Tipperary') return 'Tipperary';
  if (name === 'Cork County' || name === 'Galway County' || name === 'Cork City' || name === 'Galway City') return name;
  return name.replace(/ County$/, '');
}
