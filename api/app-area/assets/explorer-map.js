// The explorer's map (api/app-area/pages/explorer.ts `explorerMap`): MapLibre GL (CSP build,
// its worker a file of /app/assets) drawing the authorities' land, every lead of the release from
// the app's vector tiles (clusters at low zooms) and the page's leads as red points. Selecting a
// lead opens its page; selecting a cluster zooms in. Everything comes from this server.
// Without WebGL (or script) the server's SVG of the page's points stays in the box.
(function () {
  'use strict';
  var box = document.getElementById('ex-map');
  if (!box || !window.maplibregl) return;
  var gl = null;
  try {
    gl = document.createElement('canvas').getContext('webgl2');
  } catch (e) {
    gl = null;
  }
  if (!gl) {
    box.setAttribute('data-map', 'no-webgl');
    return;
  }
  var origin = window.location.origin;
  var points = JSON.parse(box.getAttribute('data-points') || '[]');
  var leadBase = box.getAttribute('data-lead-base');
  var zoom = Number(box.getAttribute('data-zoom') || '0');
  var fallback = box.firstElementChild;
  maplibregl.setWorkerUrl('/app/assets/maplibre-gl-csp-worker.js');

  var pageFeatures = points.map(function (p) {
    return {
      type: 'Feature',
      id: p.id,
      geometry: { type: 'Point', coordinates: [p.lon, p.lat] },
      properties: { id: p.id, title: p.title },
    };
  });
  var shades = ['#dfe9d8', '#e9e4d2', '#dde4ec', '#ece0dc', '#e2e9e4', '#e6e0ea'];

  var map;
  try {
    map = new maplibregl.Map({
      container: box,
      bounds: [-10.7, 51.35, -5.9, 55.45],
      fitBoundsOptions: { padding: 8 },
      maxBounds: [-14, 50, -3, 57],
      minZoom: 4,
      maxZoom: 17,
      attributionControl: {
        compact: true,
        customAttribution: 'Land: authorities’ areas in 500 m cells',
      },
      fadeDuration: 0,
      cooperativeGestures: false,
      style: {
        version: 8,
        sources: {
          land: { type: 'geojson', data: origin + box.getAttribute('data-land') },
          leads: {
            type: 'vector',
            tiles: [origin + box.getAttribute('data-tiles')],
            minzoom: 0,
            maxzoom: 16,
            attribution: 'Contains Irish public sector data licensed under CC BY 4.0',
          },
          page: { type: 'geojson', data: { type: 'FeatureCollection', features: pageFeatures } },
        },
        layers: [
          { id: 'sea', type: 'background', paint: { 'background-color': '#c9dcea' } },
          {
            id: 'land',
            type: 'fill',
            source: 'land',
            paint: {
              'fill-color': [
                'match',
                ['get', 'shade'],
                0,
                shades[0],
                1,
                shades[1],
                2,
                shades[2],
                3,
                shades[3],
                4,
                shades[4],
                shades[5],
              ],
              'fill-antialias': false,
            },
          },
          {
            id: 'clusters',
            type: 'circle',
            source: 'leads',
            'source-layer': 'leads',
            filter: ['==', ['get', 'cluster'], true],
            paint: {
              'circle-color': '#5b6b7a',
              'circle-opacity': 0.55,
              'circle-radius': ['interpolate', ['linear'], ['sqrt', ['get', 'point_count']], 1, 4, 10, 10, 60, 24],
              'circle-stroke-color': '#ffffff',
              'circle-stroke-width': 1,
            },
          },
          {
            id: 'leads',
            type: 'circle',
            source: 'leads',
            'source-layer': 'leads',
            filter: ['!=', ['get', 'cluster'], true],
            paint: {
              'circle-color': '#3d4b59',
              'circle-radius': 5,
              'circle-stroke-color': '#ffffff',
              'circle-stroke-width': 1,
            },
          },
          {
            id: 'page',
            type: 'circle',
            source: 'page',
            paint: {
              'circle-color': '#c8102e',
              'circle-radius': 7,
              'circle-stroke-color': '#ffffff',
              'circle-stroke-width': 2,
            },
          },
        ],
      },
    });
  } catch (e) {
    box.setAttribute('data-map', 'failed');
    return;
  }
  if (fallback) fallback.setAttribute('hidden', '');
  box.classList.add('map-live');
  map.addControl(new maplibregl.NavigationControl({ showCompass: false }), 'top-right');
  window.leadsMap = map;
  window.leadsMapErrors = [];
  window.leadsMapTiles = 0;

  map.on('error', function (e) {
    window.leadsMapErrors.push(String((e.error && e.error.message) || e));
  });
  map.on('data', function (e) {
    if (e.dataType === 'source' && e.sourceId === 'leads' && e.tile) window.leadsMapTiles++;
  });
  map.on('load', function () {
    if (pageFeatures.length === 1 && zoom) {
      map.jumpTo({ center: pageFeatures[0].geometry.coordinates, zoom: zoom });
    } else if (pageFeatures.length > 1) {
      var b = new maplibregl.LngLatBounds();
      pageFeatures.forEach(function (f) {
        b.extend(f.geometry.coordinates);
      });
      map.fitBounds(b, { padding: 40, maxZoom: 12, duration: 0 });
    }
  });
  map.on('idle', function () {
    box.setAttribute('data-map', 'idle');
  });

  function open(id) {
    if (id !== undefined && id !== null && /^\d+$/.test(String(id))) window.location.assign(leadBase + id);
  }
  map.on('click', 'page', function (e) {
    open(e.features[0].properties.id);
  });
  map.on('click', 'leads', function (e) {
    open(e.features[0].id);
  });
  map.on('click', 'clusters', function (e) {
    map.easeTo({ center: e.lngLat, zoom: Math.min(map.getZoom() + 2, 16) });
  });
  ['page', 'leads', 'clusters'].forEach(function (layer) {
    map.on('mouseenter', layer, function () {
      map.getCanvas().style.cursor = 'pointer';
    });
    map.on('mouseleave', layer, function () {
      map.getCanvas().style.cursor = '';
    });
  });
})();
