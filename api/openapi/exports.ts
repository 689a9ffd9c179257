/**
 * The response schemas of the exports, GeoJSON feeds and OGC API Features (issue 5) that are not
 * files in `schemas/`, merged into the document by `api/openapi/document.ts`. Their operations are
 * declared with their handlers in api/routes/exports.ts, feeds.ts and ogc.ts.
 */
type Json = Record<string, any>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

const LINKS = { type: 'array', description: 'Links (OGC API Common).', items: ref('GeojsonPage/$defs/link') };

/** Response schemas of these operations that are not files in `schemas/`. */
export function exportResponseSchemas(): Json {
  const collection: Json = {
    type: 'object',
    description: 'An OGC API Features collection.',
    properties: {
      id: { type: 'string', description: 'Collection id.' },
      title: { type: 'string', description: 'Title.' },
      description: { type: 'string', description: 'What it holds.' },
      itemType: { type: 'string', description: 'Always feature.' },
      crs: {
        type: 'array',
        description:
          'Coordinate reference systems the items can be asked in (`crs`): CRS84 and EPSG:2157 (OGC API Features Part 2).',
        items: { type: 'string' },
      },
      storageCrs: {
        type: 'string',
        description:
          'The CRS the features are stored in (CRS84): asked in it, they are served without a transformation.',
      },
      extent: { type: 'object', description: 'Spatial (bbox, CRS84) and temporal (interval) extent.' },
      links: LINKS,
    },
    required: ['id', 'links', 'extent'],
  };
  return {
    GisToken: {
      type: 'object',
      description: 'A GIS query token.',
      properties: {
        access_token: {
          type: 'string',
          pattern: '^gt_[A-Za-z0-9_-]+$',
          description: 'Pass as `access_token=` on GIS URLs.',
        },
        token_type: { type: 'string', const: 'query', description: 'Always query.' },
        expires_at: { type: 'string', format: 'date-time', description: 'Expiry.' },
        expires_in: { type: 'integer', description: 'Seconds until expiry.' },
        key_id: { type: 'string', description: 'Id of the key the token stands for.' },
        usage: { type: 'string', description: 'How to use it.' },
      },
      required: ['access_token', 'token_type', 'expires_at', 'expires_in', 'key_id'],
      additionalProperties: false,
    },
    OgcLandingPage: {
      type: 'object',
      description: 'OGC API landing page.',
      properties: {
        title: { type: 'string', description: 'Title.' },
        description: { type: 'string', description: 'Description.' },
        links: LINKS,
      },
      required: ['links'],
    },
    OgcConformance: {
      type: 'object',
      description: 'OGC API conformance declaration.',
      properties: {
        conformsTo: { type: 'array', description: 'Conformance class URIs.', items: { type: 'string', format: 'uri' } },
      },
      required: ['conformsTo'],
    },
    OgcCollection: collection,
    OgcQueryables: {
      type: 'object',
      description:
        'The queryables of a collection (OGC API Features Part 3): a JSON Schema of the attribute filters of its items, one property per query parameter.',
      properties: {
        $schema: { type: 'string', description: 'The JSON Schema dialect (2020-12).' },
        $id: { type: 'string', format: 'uri', description: "This document's URL." },
        type: { type: 'string', const: 'object', description: 'Always object.' },
        title: { type: 'string', description: "The collection's title." },
        description: { type: 'string', description: 'How the properties are used.' },
        properties: {
          type: 'object',
          description:
            "Per query parameter, its JSON Schema (type, enum, bounds, description); `geometry` is the feature's point.",
          additionalProperties: { type: 'object' },
        },
        additionalProperties: { type: 'boolean', description: 'Always false: other parameters are refused.' },
      },
      required: ['$schema', '$id', 'type', 'properties'],
    },
    OgcCollections: {
      type: 'object',
      description: 'OGC API collections.',
      properties: {
        links: LINKS,
        collections: { type: 'array', description: 'The collections.', items: ref('OgcCollection') },
      },
      required: ['links', 'collections'],
    },
  };
}
