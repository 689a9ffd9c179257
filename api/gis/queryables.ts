/**
 * The queryables of an OGC API Features collection (`GET /v1/ogc/collections/{id}/queryables`,
 * in the form of OGC API – Features Part 3, 19-079r2, "Queryables"): a JSON Schema whose
 * properties are the collection's attribute filters — the query parameters its items take beside
 * the core ones (`bbox`, `datetime`, `limit`) and the areas (`near`, `polygon`). Derived from the
 * items' query schema (`gisQuerySchema('ogc', layer)`), so for `leads` from the filter table
 * (api/query/lead-filters.ts): a filter added there is advertised here with no change.
 *
 * Each property is a query parameter of `…/items` (`?vertical=solar&min_value=1000000`), not a
 * CQL2 expression: the API implements no `filter` parameter, so it declares no Part 3 conformance
 * class; QGIS and GDAL pass such parameters in the items URL.
 */
import { derefProp } from '../query/parse-query.ts';
import { GIS_AREA_PARAMS, gisQuerySchema, type GisLayer } from '../query/feeds-query.ts';

type Json = Record<string, any>;

/** The media type of a queryables document (OGC API Features Part 3). */
export const QUERYABLES_TYPE = 'application/schema+json';
/** The link relation from a collection to its queryables. */
export const QUERYABLES_REL = 'http://www.opengis.net/def/rel/ogc/1.0/queryables';

/** Items parameters that are not attribute filters: paging, format, authentication, CRS, the core and area selections, and the aliases of dates. */
const NOT_QUERYABLE = new Set([
  'limit',
  'cursor',
  'access_token',
  'f',
  'crs',
  'bbox-crs',
  'bbox',
  'datetime',
  'since',
  'updated_since',
  ...GIS_AREA_PARAMS,
]);

/** A parameter's schema as a client reads it: its `$ref` followed, the parser's own `x-` annotations left out. */
function publicSchema(prop: Json): Json {
  return Object.fromEntries(Object.entries(derefProp(prop)).filter(([k]) => !k.startsWith('x-')));
}

/**
 * The queryables document of a collection; `href` is its own URL (its `$id`).
 *
 * @example queryables('leads', 'https://…/v1/ogc/collections/leads/queryables', 'Construction leads').properties.vertical
 *   // { type: 'array', items: { type: 'string', enum: ['agricultural_buildings', …] }, description: '…' }
 */
export function queryables(layer: GisLayer, href: string, title: string): Json {
  const props = gisQuerySchema('ogc', layer).properties as Record<string, Json>;
  const properties: Json = {
    geometry: {
      format: 'geometry-point',
      'x-ogc-role': 'primary-geometry',
      description: "The feature's point (WGS 84); selected by `bbox`, `near` + `radius_m` and `polygon`.",
    },
  };
  for (const [name, prop] of Object.entries(props)) if (!NOT_QUERYABLE.has(name)) properties[name] = publicSchema(prop);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: href,
    type: 'object',
    title,
    description:
      `The attribute filters of \`/ogc/collections/${layer}/items\`: each property is a query parameter of the items (comma-separated values of a list match any of them; parameters combine with AND). ` +
      'Any other parameter is a 400 `unknown_parameter` naming it.',
    properties,
    additionalProperties: false,
  };
}
