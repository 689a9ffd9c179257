/**
 * Classification rules that turn a planning application's free text and numbers into the
 * published facets of a lead: use class, trade verticals, demolition flag, estimated value and
 * scale. Every rule is a small exported table so the docs (docs/data-model.md), the tests and
 * the API's allowed-value lists all read the same source. All functions are pure.
 *
 * Regexes are compiled once at module load; the per-row functions only run them.
 */
import type { PlanningRow, Scale } from '../types.ts';

/** A trade vertical: a lead's trade feed and the NACE codes of companies that supply it. */
export interface Vertical {
  code: string;
  label: string;
  /** Matched against the application's description at word starts (case-insensitive). */
  keywords: RegExp;
  /** NACE Rev. 2 four-digit codes of companies in this trade (used by the suppliers table). */
  nace: readonly string[];
}

/**
 * A keyword regex as published: the pattern must match at the start of a word ("roof" matches
 * "rooflight" and "re-roof", "insulat" does not match "uninsulated"), case-insensitive.
 */
function kw(re: RegExp): RegExp {
  return new RegExp(`\\b(?:${re.source})`, 'i');
}

/** The trade verticals, in published order. `classifyVerticals` returns a sorted subset. */
export const VERTICALS: readonly Vertical[] = [
  { code: 'agricultural_buildings', label: 'Agricultural buildings', keywords: kw(/agricultur|slatted|cattle|milking|parlour|silage|slurry|livestock|poultry|piggery|hay ?barn|cubicle|calf|calving|dairy|\bstables?\b|farm ?yard|farm (?:building|shed)|farms?\b(?<!(?:solar|wind|server|data|fish) farms?)(?! ?house| dwelling)|(?:straw|hay|fodder|meal|machinery|general purpose|cattle|sheep|calf|hay) (?:shed|store|bin)s?|machinery shed|lambing|sheep|grain store|animal housing|manure|equine/i), nace: ['2511', '1623'] },
  { code: 'concrete', label: 'Concrete and precast', keywords: kw(/concrete|precast|\bslabs?\b|slatted|\bsilos?\b|underground (?:slurry )?tank|retaining wall/i), nace: ['2361', '2363'] },
  { code: 'data_centre_fitout', label: 'Data-centre fit-out', keywords: kw(/data (?:centre|center|hall|storage facilit|processing)|datacent|hyperscale|server (?:hall|farm|room)|colocation/i), nace: ['4321', '4322'] },
  { code: 'demolition', label: 'Demolition', keywords: kw(/demoli|knock(?:ing)? down/i), nace: ['4311'] },
  { code: 'electrical', label: 'Electrical', keywords: kw(/electric|lighting|rewir|wiring|substation|\bcables?\b|\bkv\b|\d\s?kv\b|switch ?room|transformer/i), nace: ['4321'] },
  { code: 'ev_charging', label: 'EV charging', keywords: kw(/\bev\b|electric vehicle|e-car|charging (?:points?|stations?|bays?|hub|spaces?|infrastructure)|car charg/i), nace: ['4321'] },
  { code: 'flooring', label: 'Flooring and tiling', keywords: kw(/flooring|floor (?:finish|covering)|tiling|screed|carpet|timber floor/i), nace: ['4333'] },
  { code: 'glazing_facades', label: 'Glazing and facades', keywords: kw(/glaz|curtain wall|fa[cç]ade|cladding|shop ?fronts?|atrium|glass/i), nace: ['4334', '2312'] },
  { code: 'groundworks', label: 'Groundworks and drainage', keywords: kw(/excavat|foundation|site (?:clearance|preparation)|drainage|basement|underpinning|septic|percolation|wastewater|waste water|sewer|soakaway|attenuation|access road|(?:new|vehicular|site|widen\w*|revised|relocat\w*) entrance|entrance (?:gate|way|road)|car ?park|earthworks|infill|land ?fill|retaining wall|road ?works|culvert|\bhardstanding/i), nace: ['4312'] },
  { code: 'heat_pumps', label: 'Heat pumps', keywords: kw(/heat pump|air[- ]to[- ]water|air source|ground source|geothermal/i), nace: ['4322'] },
  { code: 'hvac', label: 'HVAC and ventilation', keywords: kw(/hvac|ventilation|air[- ]condition|air handling|mechanical plant|chiller|cooling|extract(?:ion)? (?:system|duct|fan|flue)|\bmvhr\b|plant room|\bflues?\b/i), nace: ['4322'] },
  { code: 'insulation', label: 'Insulation and retrofit', keywords: kw(/insulat|external wall (?:insulation|wrap)|\bewi\b|retrofit|energy (?:upgrade|efficiency)|airtight|thermal upgrade|dry[- ]lining/i), nace: ['4329'] },
  { code: 'kitchens_interiors', label: 'Kitchens and interiors', keywords: kw(/kitchen|interior|fit[- ]?out|internal (?:alterations|works|modifications|reconfiguration|layout)|refurbish|joinery|bathroom|utility room/i), nace: ['3102', '4339'] },
  { code: 'landscaping', label: 'Landscaping', keywords: kw(/landscap|boundary (?:wall|treatment|fence|fencing)|garden|patio|paving|site works|planting|public realm|amenity space|playground|decking/i), nace: ['8130'] },
  { code: 'plumbing_heating', label: 'Plumbing and heating', keywords: kw(/plumb|heating|boiler|bathroom|en[- ]suite|sanitary|\bwc\b|toilets?\b|shower|water supply|septic|wastewater treatment|underfloor/i), nace: ['4322'] },
  { code: 'roofing', label: 'Roofing', keywords: kw(/roof|dormer|re-roof|slate|velux|rooflight/i), nace: ['4391'] },
  { code: 'scaffolding', label: 'Scaffolding', keywords: kw(/scaffold|\b(?:three|four|five|six|seven|eight|nine|ten|eleven|twelve|[3-9]|\d{2})[- ]?(?:to [\w-]+ )?stor(?:e)?y|\bstoreys\b|high[- ]rise|tower crane/i), nace: ['4399'] },
  { code: 'security_fire', label: 'Security and fire safety', keywords: kw(/fire (?:alarm|safety|escape|door|certificate|station|exit|stairs?|suppression)|sprinkler|cctv|security|access control|\balarms?\b|intruder/i), nace: ['8020'] },
  { code: 'signage_shopfronts', label: 'Signage and shopfronts', keywords: kw(/signage|\bsigns?\b|shop ?fronts?|advertis|fascia|totem|billboard|illuminated (?:sign|box|logo|lettering)|digital display/i), nace: ['3299'] },
  { code: 'solar', label: 'Solar PV', keywords: kw(/solar|photovoltaic|\bpv\b/i), nace: ['4321', '3511'] },
  { code: 'steel_structures', label: 'Steel structures', keywords: kw(/\bsteel|portal frame|structural frame|mezzanine|\bsheds?\b|\bbarns?\b|canopy|canopies|lean[- ]to/i), nace: ['2511'] },
  { code: 'telecoms', label: 'Telecoms', keywords: kw(/telecom|\bmasts?\b|antenna|\b5g\b|monopole|lattice (?:tower|structure|mast)|communications? (?:structure|tower|infrastructure|equipment|installation|cabinet)|broadband|\bdish(?:es)?\b|street ?pole|small cell/i), nace: ['4222', '6110', '6120'] },
  { code: 'windows_doors', label: 'Windows and doors', keywords: kw(/window|\bdoors?\b|doorway|fenestration|\bporch|patio door|bi-?fold/i), nace: ['4332', '1623'] },
];

/** Use classes (one per lead), roughly in the order `classifyUseClass` tests them (see docs/data-model.md). */
export const USE_CLASSES: readonly string[] = [
  'data_centre', 'energy', 'telecoms', 'mixed_use', 'residential_multi', 'house', 'change_of_use',
  'healthcare', 'hospitality', 'education', 'agricultural', 'residential_extension',
  'warehouse_logistics', 'industrial', 'office', 'retail', 'community', 'commercial', 'other',
];

/**
 * Verticals every lead of a use class gets, whatever its description says (a new house always
 * needs a roofer, an electrician, …). Keyword matches are added on top.
 */
export const USE_CLASS_VERTICALS: Readonly<Record<string, readonly string[]>> = {
  house: ['roofing', 'windows_doors', 'electrical', 'plumbing_heating', 'insulation', 'kitchens_interiors', 'flooring', 'groundworks', 'heat_pumps'],
  residential_multi: ['roofing', 'windows_doors', 'electrical', 'plumbing_heating', 'insulation', 'kitchens_interiors', 'flooring', 'groundworks', 'heat_pumps', 'landscaping', 'scaffolding', 'security_fire', 'concrete'],
  mixed_use: ['roofing', 'windows_doors', 'electrical', 'plumbing_heating', 'insulation', 'kitchens_interiors', 'flooring', 'groundworks', 'heat_pumps', 'scaffolding', 'security_fire', 'concrete', 'signage_shopfronts', 'glazing_facades'],
  residential_extension: ['windows_doors', 'electrical', 'insulation'],
  data_centre: ['data_centre_fitout', 'electrical', 'hvac', 'security_fire', 'steel_structures', 'concrete', 'groundworks'],
  energy: ['electrical', 'groundworks'],
  telecoms: ['telecoms'],
  agricultural: ['agricultural_buildings', 'steel_structures', 'concrete'],
  warehouse_logistics: ['steel_structures', 'concrete', 'groundworks', 'roofing', 'electrical', 'security_fire'],
  industrial: ['steel_structures', 'concrete', 'groundworks', 'electrical', 'hvac'],
  office: ['electrical', 'hvac', 'kitchens_interiors', 'glazing_facades', 'security_fire', 'flooring'],
  retail: ['signage_shopfronts', 'electrical', 'kitchens_interiors', 'flooring'],
  hospitality: ['kitchens_interiors', 'hvac', 'electrical', 'plumbing_heating', 'flooring', 'security_fire'],
  education: ['electrical', 'hvac', 'security_fire', 'flooring', 'roofing'],
  healthcare: ['electrical', 'hvac', 'plumbing_heating', 'security_fire', 'flooring'],
  community: ['electrical'],
  commercial: ['electrical', 'security_fire'],
  change_of_use: ['kitchens_interiors', 'electrical', 'plumbing_heating'],
  other: [],
};

/** The vertical given to a lead when neither its use class nor its description yields one. */
export const FALLBACK_VERTICAL = 'groundworks';

/** Scale thresholds: a lead reaches a level when any one of units, floor area or value does. */
export const SCALE_THRESHOLDS = {
  major: { units: 50, floorM2: 5_000, value: 10_000_000 },
  large: { units: 10, floorM2: 1_000, value: 2_000_000 },
  medium: { units: 2, floorM2: 200, value: 250_000 },
} as const satisfies Record<'major' | 'large' | 'medium', { units: number; floorM2: number; value: number }>;

/** A site of at least this many hectares is at least `large`. */
export const LARGE_SITE_HA = 5;

/** Build cost per m² of floor area, 2026 prices, by use class (EUR). */
export const RATE_PER_M2: Readonly<Record<string, number>> = {
  house: 2_400, residential_extension: 2_200, residential_multi: 2_900, mixed_use: 2_700,
  commercial: 2_000, retail: 1_800, office: 3_200, industrial: 1_300, warehouse_logistics: 1_100,
  data_centre: 12_000, agricultural: 450, hospitality: 2_800, education: 2_600, healthcare: 3_500,
  community: 2_200, energy: 1_500, telecoms: 2_000, change_of_use: 1_200, other: 1_500,
};

/** Build cost per residential unit when no floor area is known (EUR, 2026). */
export const UNIT_COST: Readonly<Record<string, number>> = {
  house: 320_000, residential_multi: 320_000, mixed_use: 320_000, change_of_use: 200_000,
};

/** Typical project value by use class when neither floor area nor units are known (EUR, 2026). */
export const TYPICAL_VALUE: Readonly<Record<string, number>> = {
  house: 380_000, residential_extension: 60_000, residential_multi: 2_500_000, mixed_use: 5_000_000,
  commercial: 400_000, retail: 150_000, office: 1_500_000, industrial: 1_200_000,
  warehouse_logistics: 3_000_000, data_centre: 80_000_000, agricultural: 90_000, hospitality: 600_000,
  education: 1_500_000, healthcare: 2_000_000, community: 350_000, energy: 2_000_000,
  telecoms: 60_000, change_of_use: 120_000, other: 50_000,
};

/**
 * Typical values for small single-trade jobs recognised from the description. They replace the
 * use-class typical value when the description is only that job (no new build, no extension).
 * Energy projects with a stated capacity are valued per MW instead (see ENERGY_VALUE_PER_MW).
 */
export const TYPICAL_JOB_VALUE: readonly { job: string; pattern: RegExp; value: number }[] = [
  { job: 'solar_retrofit', pattern: /solar|photovoltaic|\bpv\b/i, value: 12_000 },
  { job: 'signage', pattern: /signage|\bsigns?\b|advertis|fascia|totem|billboard/i, value: 8_000 },
  { job: 'ev_charging', pattern: /charging (?:points?|stations?|bays?|spaces?)|electric vehicle|\bev\b/i, value: 25_000 },
  { job: 'heat_pump', pattern: /heat pump/i, value: 15_000 },
  { job: 'windows_doors', pattern: /replacement (?:of )?(?:the )?(?:existing )?windows|new windows/i, value: 20_000 },
];

/** Value per MW of stated capacity for energy projects (EUR, 2026). */
export const ENERGY_VALUE_PER_MW = 1_000_000;

/** Regional build-cost factor by county; counties not listed use 1.0. */
export const REGIONAL_FACTOR: Readonly<Record<string, number>> = {
  Dublin: 1.15, Cork: 1.05, Galway: 1.05, Kildare: 1.05, Meath: 1.05, Wicklow: 1.05,
};

// ---------------------------------------------------------------------------------------------
// Keyword scanning

/**
 * Which of several keyword patterns occur in an already lower-cased text, each matched at a word
 * start (`\b(?:pattern)`). One pass of one combined regex finds every position where some pattern
 * matches; only there are the individual patterns tried (sticky). About six times faster than
 * running every pattern over the whole text, which matters at 200,000 descriptions per release.
 * Patterns are lower-case, without capture groups.
 */
function keywordScanner(sources: readonly string[]): (lower: string) => boolean[] {
  const any = new RegExp(`\\b(?:${sources.join('|')})`, 'g');
  const sticky = sources.map((src) => new RegExp(`\\b(?:${src})`, 'y'));
  return (lower) => {
    const hit = new Array<boolean>(sources.length).fill(false);
    let left = sources.length;
    any.lastIndex = 0;
    let m: RegExpExecArray | null;
    while (left > 0 && (m = any.exec(lower)) !== null) {
      const at = m.index;
      for (let i = 0; i < sticky.length; i++) {
        if (hit[i]) continue;
        const re = sticky[i]!;
        re.lastIndex = at;
        if (re.test(lower)) {
          hit[i] = true;
          left--;
        }
      }
      any.lastIndex = at + 1;
    }
    return hit;
  };
}

/** The pattern inside a `kw()` regex. */
function inner(re: RegExp): string {
  return re.source.slice('\\b(?:'.length, -1);
}

// ---------------------------------------------------------------------------------------------
// Use class

const HOUSE_LOOKBEHIND = '(?<!public\\s|guest\\s|glass\\s|green\\s|pump\\s|boat\\s|club\\s|nursing\\s|care\\s|light\\s|tea\\s|coach\\s|hen\\s|meeting\\s|plant\\s|control\\s|switch\\s|bath\\s|school\\s|dog\\s|ice\\s|store\\s|wash\\s|power\\s|pack\\s|packing\\s|slaughter\\s|gate\\s|summer\\s|pool\\s|ware|court\\s|alms\\s|opera\\s|poly\\s|out\\s|funeral\\s|retirement\\s)';
const RES_NOUN_SRC = `\\b(?:dwellings?|${HOUSE_LOOKBEHIND}houses?|bungalows?|residences?|cottages?|domestic|${HOUSE_LOOKBEHIND}homes?|farmhouse|apartment)\\b`;
/** A word between "construction of" and "dwelling" that does not turn it into works to an existing one. */
const FILLER = '(?:(?!extension|existing|to\\b|the\\b|rear\\b|side\\b|front\\b|of\\b|at\\b|for\\b|with\\b)[\\w.&-]+\\s+)';
const NEW_HOUSE = new RegExp(
  `\\b(?:new|replacement|(?:construct|erect|build)\\w*(?:\\s+of)?)\\s+(?:a\\s+|an\\s+|one\\s+)?${FILLER}{0,5}?(?:dwelling|${HOUSE_LOOKBEHIND}house|bungalow|farmhouse|${HOUSE_LOOKBEHIND}home|residence|cottage)\\b|one[- ]off (?:rural )?(?:dwelling|house)`,
);
const RES_NOUN = new RegExp(RES_NOUN_SRC);
const EXT_WORDS = /extension|extend|alteration|renovat|refurbish|conversion|convert|dormer|porch|attic|modification|retention|upgrade/;
const NUMBER_WORD = '(?:[2-9]|[1-9][\\d,]+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty)';
const MULTI = new RegExp(
  `\\bapartments\\b|\\bduplex(?:es| units)\\b|\\btownhouses\\b|housing (?:scheme|development|estate)|residential (?:development|scheme)|\\b(?:lrd|shd)\\b|strategic housing|large[- ]scale residential|student accommodation|social housing|build[- ]to[- ]rent|\\b${NUMBER_WORD}\\s+(?:no\\.?\\s+)?(?:[\\w-]+\\s+){0,3}?(?:houses|dwellings|dwelling units|residential units|housing units|homes|apartment units)\\b`,
);

/**
 * Use-class patterns, lower-case and matched at word starts, in the order `classifyUseClass`
 * consults them (the unit count and one-off-house flag are interleaved there).
 */
const USE_CLASS_PATTERNS = {
  data_centre: /data (?:centres?|centers?|halls?|storage facilit|processing (?:centre|facilit))|datacent|hyperscale|server (?:halls?|farm)|colocation/,
  energy: /solar (?:farm|park|array|energy (?:farm|development|park)|(?:pv )?(?:energy )?development|power (?:plant|station))|photovoltaic (?:solar )?(?:farm|park|array|energy development|development)|wind (?:farm|energy|turbines?)|battery (?:energy )?storage|\bbess\b|energy storage|(?:electricity|transmission|grid) sub-?station|\d+\s?kv (?:sub-?station|substation|grid|cable|line|transmission)|grid connection|\b\d+(?:\.\d+)?\s?mw\b|anaerobic digest|biogas|biomethane|hydrogen|synchronous condenser|interconnector|power station|renewable energy development/,
  telecoms: /telecom|\bmasts?\b|antenna|\b5g\b|monopole|lattice (?:tower|structure|mast)|communications? (?:structure|tower|infrastructure|equipment|installation)|street ?pole|small cell/,
  mixed_use: /mixed[- ]use|(?:ground floor|commercial|retail|office|creche) (?:units?|space|use)\b[^;]{0,120}?\b(?:apartments|residential units|duplex)|(?:apartments|residential units)\b[^;]{0,120}?\b(?:ground floor|commercial|retail|office) (?:units?|space)\b/,
  multi: MULTI,
  new_house: NEW_HOUSE,
  ext_words: EXT_WORDS,
  change_of_use: /change of use|material change/,
  healthcare: /hospital|clinic\b|nursing home|care (?:home|facility|centre)|medical|primary care|health ?(?:care )?centre|dental|\bgp\b|doctors'? surgery|hospice|step[- ]down|mental health|\bhse\b|residential care/,
  hospitality: /hotel|guest ?house|\bb ?& ?b\b|bed (?:and|&) breakfast|restaurant|caf[eé]\b|public house|\bpub\b|\bbar\b|takeaway|take-away|hostel|glamping|holiday (?:homes|lodges|chalets|cottages|accommodation)|self[- ]catering|tourist accommodation|tourism/,
  education: /school|college|university|classrooms?|cr[eè]che|childcare|montessori|pre-school|campus|educational|gaelscoil|third level/,
  agricultural: new RegExp(inner(VERTICALS.find((v) => v.code === 'agricultural_buildings')!.keywords)),
  res_noun: RES_NOUN,
  warehouse_logistics: /warehous|logistics|distribution (?:centre|center|hub|building|units?)|cold stor|self[- ]storage|storage (?:buildings?|units?|facilit\w*|sheds?)|fulfil?ment centre/,
  industrial: /industrial|factory|manufactur|workshop|quarry|processing (?:plant|facility|building)|enterprise (?:units?|centre)|waste (?:management|transfer|facility|recovery)|recycling|production (?:building|facility|hall)|engineering works|laborator|pharmaceutical|batching plant|asphalt plant/,
  office: /\boffices?\b|co-?working/,
  retail: /retail|\bshops?\b|shopping|food ?store|convenience store|shop ?fronts?|supermarket|\bstores?\b|petrol (?:station|filling)|service station|filling station|forecourt|showroom|car sales|pharmacy|off[- ]licen[cs]e|signage/,
  community: /community|church|parish|sports|\bgaa\b|(?:football|rugby|tennis|golf|sports|boxing|hurling|soccer) club|clubhouse|playground|library|garda station|fire station|civic|cemetery|graveyard|burial|\bpitch(?:es)?\b|all[- ]weather|leisure centre|swimming pool|public realm|greenway|footpath|cycle ?(?:way|lane|path|track)|amenity|public park|playing fields?|heritage|museum|theatre|arts centre|mosque|scout|men'?s shed/,
  commercial: /commercial|business|enterprise|car park|\bbank\b|\bgym\b|fitness|veterinary|car wash|funeral home|garage for (?:the )?repair|motor (?:repair|garage)/,
} as const;
type UsePattern = keyof typeof USE_CLASS_PATTERNS;
const USE_PATTERN_NAMES = Object.keys(USE_CLASS_PATTERNS) as UsePattern[];
/** The patterns compiled to match at word starts only (a position test before any alternative). */
const USE_RE = Object.fromEntries(
  USE_PATTERN_NAMES.map((k) => [k, new RegExp(`\\b(?:${USE_CLASS_PATTERNS[k].source})`)]),
) as Record<UsePattern, RegExp>;
/** The use classes decided by a pattern alone, in order, after the residential ones. */
const SECTOR_ORDER: readonly (UsePattern & string)[] = [
  'healthcare', 'hospitality', 'education', 'agricultural', 'res_noun', 'warehouse_logistics', 'industrial',
  'office', 'retail', 'community', 'commercial',
];

/**
 * Land use codes → use class, consulted only when the description decides nothing. Matches the
 * three-letter codes (RES, COM, IND, AGR, EDU, HLT, CMY, …) and spelled-out values alike.
 */
const LAND_USE_RULES: readonly { re: RegExp; useClass: string }[] = [
  { re: /^dat|data ?cent/i, useClass: 'data_centre' },
  { re: /^ene|energy|renew|solar|wind/i, useClass: 'energy' },
  { re: /^tel|telecom/i, useClass: 'telecoms' },
  { re: /^agr|agri|farm/i, useClass: 'agricultural' },
  { re: /^ind|indust/i, useClass: 'industrial' },
  { re: /^wh|warehous|logist/i, useClass: 'warehouse_logistics' },
  { re: /^off|office/i, useClass: 'office' },
  { re: /^ret|retail|shop/i, useClass: 'retail' },
  { re: /^edu|educ|school/i, useClass: 'education' },
  { re: /^hlt|health|hospital|medic/i, useClass: 'healthcare' },
  { re: /^hot|hotel|touris|hospitality/i, useClass: 'hospitality' },
  { re: /^cmy|communit|recreat|sport|amenity/i, useClass: 'community' },
  { re: /^mix|mixed/i, useClass: 'mixed_use' },
  { re: /^com|commerc/i, useClass: 'commercial' },
  { re: /^res|resid|dwell|hous/i, useClass: 'residential' },
];

/**
 * The leading "demolition of existing X and" clause: what is knocked down says nothing about
 * what is built ("Demolition of existing dwelling house and construction of a warehouse").
 */
const DEMOLITION_CLAUSE = /^(?:permission (?:for|to) )?(?:the )?(?:demolition of|demolish|removal of|remove) (?:the )?(?:existing )?(?:[^\s,]+ ){0,6}?(?:and|,) /;

/** Words of works to a home, for descriptions that name no building ("dormer window extension to the rear roof"). */
const DOMESTIC_HINT = /\b(?:dormer|attic|porch|garden room|sunroom|conservatory|kitchen|family room|bedrooms?|en-suite|utility room|living (?:room|space|area)|granny flat|home office|rooflights?|re-roofing|decking)\b/;

/**
 * Decide a planning application's use class from its description, falling back on its land use
 * code and unit count. Rules are tested in `USE_CLASSES` order; the first that matches wins, so
 * "construction of a data centre with ancillary offices" is `data_centre`, not `office`.
 *
 * @example classifyUseClass({ description: 'Single storey extension to rear of dwelling', land_use_code: null,
 *   num_units: null, one_off_house: false, floor_area_m2: 30 }) // 'residential_extension'
 */
export function classifyUseClass(
  row: Pick<PlanningRow, 'description' | 'land_use_code' | 'num_units' | 'one_off_house' | 'floor_area_m2'>,
): string {
  const d = row.description.toLowerCase().replace(DEMOLITION_CLAUSE, '');
  if (USE_RE.data_centre.test(d)) return 'data_centre';
  if (USE_RE.energy.test(d)) return 'energy';
  if (USE_RE.telecoms.test(d)) return 'telecoms';
  if (USE_RE.mixed_use.test(d)) return 'mixed_use';
  const units = row.num_units ?? 0;
  if (units >= 2 || USE_RE.multi.test(d)) return 'residential_multi';
  if (row.one_off_house || USE_RE.new_house.test(d)) return 'house';
  if (USE_RE.change_of_use.test(d)) return 'change_of_use';
  if (units === 1 && !USE_RE.ext_words.test(d)) return 'house';
  for (const k of SECTOR_ORDER) if (USE_RE[k].test(d)) return k === 'res_noun' ? 'residential_extension' : k;
  if (DOMESTIC_HINT.test(d)) return 'residential_extension';
  if (row.land_use_code) {
    for (const r of LAND_USE_RULES) {
      if (!r.re.test(row.land_use_code)) continue;
      if (r.useClass !== 'residential') return r.useClass;
      return units === 1 ? 'house' : 'residential_extension';
    }
  }
  return 'other';
}

// ---------------------------------------------------------------------------------------------
// Verticals and demolition

const VERTICAL_ORDER = new Map(VERTICALS.map((v, i) => [v.code, i]));
const DEMOLITION = /(?<!\bno |\bwithout )\bdemoli(?:sh|tion)|\bknock(?:ing)? down|\bremov(?:e|al of) (?:the )?existing (?:[\w-]+ ){0,3}?(?:dwellings?|houses?|buildings?|structures?|sheds?|garages?|bungalows?|cottages?|outbuildings?|extensions?|warehouses?|stores?|conservatory|porch|lean-to)\b/i;
/** Every vertical's keywords, then the demolition pattern (index VERTICALS.length). */
const scanVerticals = keywordScanner([...VERTICALS.map((v) => inner(v.keywords)), DEMOLITION.source]);

/**
 * The trade verticals of a lead: every vertical whose keywords occur in the description, plus
 * those its use class implies (`USE_CLASS_VERTICALS`). Sorted by code, no duplicates, never
 * empty (`FALLBACK_VERTICAL` when nothing else applies).
 *
 * @example classifyVerticals('Installation of solar PV panels on roof of dwelling', 'residential_extension')
 *   // ['electrical', 'insulation', 'roofing', 'solar', 'windows_doors']
 */
export function classifyVerticals(description: string, useClass: string): string[] {
  const hit = scanVerticals(description.toLowerCase());
  const implied = USE_CLASS_VERTICALS[useClass];
  if (implied) for (const code of implied) hit[VERTICAL_ORDER.get(code)!] = true;
  if (hit[VERTICALS.length]) hit[VERTICAL_ORDER.get('demolition')!] = true;
  const out: string[] = [];
  for (let i = 0; i < VERTICALS.length; i++) if (hit[i]) out.push(VERTICALS[i]!.code);
  if (out.length === 0) out.push(FALLBACK_VERTICAL);
  return out;
}


/**
 * True when the works include demolishing a building or structure ("demolition of existing
 * garage", "knock down", "removal of existing shed"). "No demolition" does not count.
 */
export function detectDemolition(description: string): boolean {
  return DEMOLITION.test(description);
}

// ---------------------------------------------------------------------------------------------
// Value and scale

const NEW_BUILD = /extension|construct|erect|demoli|new (?:dwelling|house|building)|change of use/i;
const MW = /\b(\d+(?:\.\d+)?)\s?mw\b/i;

/** Round to the nearest €1,000 (at least €1,000). */
function roundK(v: number): number {
  return Math.max(1_000, Math.round(v / 1_000) * 1_000);
}

/**
 * Estimated project value in whole euros (2026 prices), with the basis used:
 * - `floor_area`: floor area × `RATE_PER_M2[useClass]` × `REGIONAL_FACTOR[county]`;
 * - `units`: units × `UNIT_COST[useClass]` × regional factor (residential classes only);
 * - `typical`: an energy project's stated MW × `ENERGY_VALUE_PER_MW`, else a small single-trade
 *   job's value (`TYPICAL_JOB_VALUE`), else `TYPICAL_VALUE[useClass]`. No regional factor.
 * Rounded to €1,000.
 *
 * @example estimateValue({ useClass: 'house', floorAreaM2: 200, units: 1, county: 'Dublin', description: '' })
 *   // { est_value: 552000, est_value_basis: 'floor_area' }
 */
export function estimateValue(i: {
  useClass: string;
  floorAreaM2: number | null;
  units: number | null;
  county: string;
  description: string;
}): { est_value: number; est_value_basis: 'floor_area' | 'units' | 'typical' } {
  const factor = REGIONAL_FACTOR[i.county] ?? 1;
  if (i.floorAreaM2 !== null && i.floorAreaM2 > 0) {
    const rate = RATE_PER_M2[i.useClass] ?? RATE_PER_M2.other!;
    return { est_value: roundK(i.floorAreaM2 * rate * factor), est_value_basis: 'floor_area' };
  }
  const unitCost = UNIT_COST[i.useClass];
  if (unitCost !== undefined && i.units !== null && i.units > 0) {
    return { est_value: roundK(i.units * unitCost * factor), est_value_basis: 'units' };
  }
  if (i.useClass === 'energy') {
    const m = MW.exec(i.description);
    if (m && Number(m[1]) > 0) return { est_value: roundK(Number(m[1]) * ENERGY_VALUE_PER_MW), est_value_basis: 'typical' };
  }
  if (i.useClass !== 'energy' && i.useClass !== 'data_centre' && i.useClass !== 'residential_multi' && i.useClass !== 'mixed_use' && !NEW_BUILD.test(i.description)) {
    for (const j of TYPICAL_JOB_VALUE) if (j.pattern.test(i.description)) return { est_value: j.value, est_value_basis: 'typical' };
  }
  return { est_value: TYPICAL_VALUE[i.useClass] ?? TYPICAL_VALUE.other!, est_value_basis: 'typical' };
}

function reaches(t: { units: number; floorM2: number; value: number }, units: number, floor: number, value: number): boolean {
  return units >= t.units || floor >= t.floorM2 || value >= t.value;
}

/**
 * Project scale: the highest level any one of units, floor area or estimated value reaches
 * (`SCALE_THRESHOLDS`, inclusive); a site of `LARGE_SITE_HA` hectares or more is at least large.
 */
export function classifyScale(i: { units: number | null; floorAreaM2: number | null; siteAreaHa: number | null; estValue: number }): Scale {
  const units = i.units ?? 0;
  const floor = i.floorAreaM2 ?? 0;
  if (reaches(SCALE_THRESHOLDS.major, units, floor, i.estValue)) return 'major';
  if (reaches(SCALE_THRESHOLDS.large, units, floor, i.estValue) || (i.siteAreaHa ?? 0) >= LARGE_SITE_HA) return 'large';
  if (reaches(SCALE_THRESHOLDS.medium, units, floor, i.estValue)) return 'medium';
  return 'minor';
}

// ---------------------------------------------------------------------------------------------
// One classification for the refresh and `leads classify`

/** The planning fields classification reads (a `PlanningRow`'s, all but the description optional). */
export interface ClassifyInput {
  description: string;
  application_type?: string | null;
  application_number?: string | null;
  land_use_code?: string | null;
  num_units?: number | null;
  one_off_house?: boolean;
  floor_area_m2?: number | null;
}

/** What a lead publishes about its trade: use class, kind of works, verticals and why. */
export interface Classification {
  use_class: string;
  works_kind: string;
  verticals: string[];
  explicit_verticals: string[];
  vertical_evidence: string[];
  demolition: boolean;
}

const LAND_USE_DEMOLITION = /demol/i;

/**
 * The whole classification of one planning application: the one function the refresh
 * (normalise/leads.ts) and `leads classify` call.
 */
export function classifyApplication(i: ClassifyInput): Classification {
  const row = {
    description: i.description, land_use_code: i.land_use_code ?? null, num_units: i.num_units ?? null,
    one_off_house: i.one_off_house ?? false, floor_area_m2: i.floor_area_m2 ?? null,
  };
  const useClass = classifyUseClass(row);
  const demolition = detectDemolition(i.description) || (row.land_use_code !== null && LAND_USE_DEMOLITION.test(row.land_use_code));
  const verticals = classifyVerticals(i.description, useClass);
  if (demolition && !verticals.includes('demolition')) {
    verticals.push('demolition');
    verticals.sort();
  }
  const hit = scanVerticals(i.description.toLowerCase());
  const explicit = verticals.filter((v) => hit[VERTICAL_ORDER.get(v)!]);
  return { use_class: useClass, works_kind: 'new_works', verticals, explicit_verticals: explicit, vertical_evidence: [], demolition };
}

/** Kinds of works (`works_kind`), in published order; see docs/data-quality.md. */
export const WORKS_KINDS = ['new_works', 'extension_of_duration', 'outline', 'retention', 'amendment', 'declaration'] as const;
export type WorksKind = (typeof WORKS_KINDS)[number];

/** Kinds with no work to sell: their leads publish no verticals. */
export const NO_WORK_KINDS: ReadonlySet<string> = new Set<WorksKind>(['retention', 'amendment', 'declaration']);

/** Application types (as publishers write them) → kind of works; a plain permission decides nothing. */
const APPLICATION_TYPE_KINDS: readonly { re: RegExp; kind: WorksKind }[] = [
  { re: /extension of (?:the )?duration|\bextend (?:the )?duration/i, kind: 'extension_of_duration' },
  { re: /section\s*(?:5|57)\b|declaration|exempt/i, kind: 'declaration' },
  { re: /^(?:permission (?:for )?)?retention\b|^retain/i, kind: 'retention' },
  { re: /^outline\b/i, kind: 'outline' },
];

/**
 * The kind of works an application type states, or null when it states none ("PERMISSION",
 * "PERMISSION AND RETENTION", "PERMISSION CONSEQUENT", a large-scale residential development …).
 *
 * @example worksKindOfType('RETENTION') // 'retention'
 */
export function worksKindOfType(applicationType: string | null | undefined): WorksKind | null {
  if (!applicationType) return null;
  const t = applicationType.trim();
  for (const r of APPLICATION_TYPE_KINDS) if (r.re.test(t)) return r.kind;
  return null;
}
