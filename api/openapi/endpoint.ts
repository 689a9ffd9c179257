/**
 * The declaration of one operation of the OpenAPI document: what api/openapi/document.ts builds
 * an operation from. Each route declares its operations with these fields and its handler, in one
 * object (`Operation`, api/routes/operation.ts).
 */
type Json = Record<string, any>;

/** One operation of the API, as mounted under /v1 (`{id}` is a path parameter). */
export interface Endpoint {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  summary: string;
  description: string;
  tag: string;
  /** Public (no key), e.g. the reference docs. */
  public?: boolean;
  /** JSON Schema of the query parameters (properties → parameters). */
  query?: Json;
  pathParams?: Json[];
  /** Request header parameters (e.g. `Idempotency-Key`). */
  headerParams?: Json[];
  /** Success body: a `$ref` schema and media type; `status` 200 unless given; `location` adds a Location header. */
  ok: {
    schema: Json | null;
    type?: string;
    description: string;
    status?: number;
    location?: boolean;
    empty?: string;
    alternate?: { type: string; schema: Json };
  };
  /** JSON request body schema (POST) and whether a body is required. */
  body?: Json;
  bodyRequired?: boolean;
  /** Problem statuses besides the ones every endpoint has. */
  errors: number[];
  /** Describes the request body. */
  bodyDescription?: string;
  /** Answers with ETag / 304. */
  cached?: boolean;
  /** Served at the origin, outside /v1 (the operation names its own server): /healthz, /readyz, /metrics. */
  origin?: boolean;
  /** Security of a public operation that has a scheme of its own (`/metrics`); none when absent. */
  security?: Json[];
}

/** A `$ref` to a component schema of the document: `schemaRef('LeadsPage')`. */
export const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** The path parameter `id` of a lead (`/leads/{id}`, `/leads/{id}/history`). */
export const LEAD_ID_PARAM: Json = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'Lead id.',
  schema: { type: 'integer', minimum: 1 },
};
