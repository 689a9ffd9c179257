/**
 * Query strings of `GET /v1/leads` and the exports, one or two of each kind of filter (none,
 * places, `q` with a word and with OR, numbers and enumerations, dates, a flag, a radius, a box,
 * a polygon), for tests that compare two ways of answering the same filters on the tiny release.
 */
export const FILTER_KIND_QUERIES: readonly string[] = [
  '',
  'county=Cork,Dublin',
  'q=extension',
  'q=house OR apartments',
  'min_value=250000&status=granted',
  'received_from=2024-01-01&received_to=2024-12-31',
  'has_contact=false',
  'near=53.35,-6.26&radius_m=20000',
  'bbox=-9.5,51.5,-8,52.5',
  'polygon=' +
    encodeURIComponent(
      JSON.stringify({
        type: 'Polygon',
        coordinates: [
          [
            [-6.5, 53.2],
            [-6.0, 53.2],
            [-6.0, 53.5],
            [-6.5, 53.5],
            [-6.5, 53.2],
          ],
        ],
      }),
    ),
];
