/**
 * RFC 7946 checks for the GIS tests: the rules a GeoJSON FeatureCollection of Point features
 * must follow (members, types, positions, no `crs`, longitude/latitude ranges), written out
 * from the RFC rather than taken from the code under test. Returns the list of violations.
 */
export function rfc7946Errors(doc: unknown): string[] {
  const errs: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(doc)) return ['not a JSON object'];
  if (doc['type'] !== 'FeatureCollection') errs.push(`type is ${String(doc['type'])}, not FeatureCollection`);
  if ('crs' in doc) errs.push('has a crs member (removed by RFC 7946 §4)');
  if (!Array.isArray(doc['features'])) return [...errs, 'features is not an array'];
  (doc['features'] as unknown[]).forEach((f, i) => errs.push(...featureErrors(f).map((e) => `features[${i}]: ${e}`)));
  return errs;
}

/** RFC 7946 §3.2 (Feature) with a §3.1.2 Point geometry. */
export function featureErrors(f: unknown): string[] {
  const errs: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(f)) return ['not an object'];
  if (f['type'] !== 'Feature') errs.push('type is not Feature');
  if ('id' in f && typeof f['id'] !== 'number' && typeof f['id'] !== 'string')
    errs.push('id is neither a number nor a string');
  if (!('properties' in f) || !(f['properties'] === null || isObj(f['properties'])))
    errs.push('properties is not an object or null');
  const g = f['geometry'];
  if (!isObj(g)) return [...errs, 'geometry is not an object'];
  if (g['type'] !== 'Point') errs.push(`geometry type ${String(g['type'])}`);
  const c = g['coordinates'];
  if (
    !Array.isArray(c) ||
    c.length < 2 ||
    c.length > 3 ||
    c.some((x) => typeof x !== 'number' || !Number.isFinite(x))
  ) {
    errs.push(`coordinates ${JSON.stringify(c)} are not a position`);
  } else {
    if (c[0] < -180 || c[0] > 180) errs.push(`longitude ${c[0]} out of range`);
    if (c[1] < -90 || c[1] > 90) errs.push(`latitude ${c[1]} out of range`);
  }
  return errs;
}
