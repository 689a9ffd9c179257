/**
 * Classification rules that turn a planning application's free text and numbers into the
 * published facets of a lead: use class, trade verticals, demolition flag, estimated value and
 * scale. Every rule is a small exported table so the docs (docs/data-model.md), the tests and
 * the API's allowed-value lists all read the same source. All functions are pure.
 *
 * Regexes are compiled once at module load; the per-row functions only run them.
 */
import type { PlanningRow, Scale, WorksKind } from '../types.ts';
import { VERTICAL_LABELS } from '../../common/labels.ts';
import type { VerticalCode } from '../../common/lead-vocabulary.ts';

/** A trade vertical: a lead's trade feed and the NACE codes of companies that supply it. */
export interface Vertical {
  code: VerticalCode;
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

/**
 * A building's demolition: "demolish", "demolition of", "knock down", "removal of existing
 * garage". Not a wall, railings, pillars or gates ("demolition of section of front wall": no
 * building comes down), nor "no demolition".
 */
const NOT_A_BUILDING =
  '(?! (?:of )?(?:the |a )?(?:existing )?(?:(?:section|part|portion) of (?:the )?(?:existing )?)?(?:(?:front|rear|side|boundary|garden|stone|party|roadside|low|brick)\\s+)*(?:walls?|railings|pillars|gates?)\\b| to (?:allow|provide|form|create|facilitate))';
const DEMOLITION_SRC = `(?<!\\bno |\\bwithout )demoli(?:sh\\w*|tion)${NOT_A_BUILDING}|knock(?:ing)? down|remov(?:e|al of) (?:the )?(?:existing (?:[\\w-]+ ){0,3}?|(?:[\\w-]+ ){0,2}?)(?:dwellings?|houses?|buildings?|structures?|sheds?|garages?|bungalows?|cottages?|outbuildings?|extensions?|warehouses?|stores?|conservatory|porch|lean-to)\\b`;

/**
 * What is knocked down or removed, up to the works that follow it ("demolish rear extension &
 * shed & construct …"): its words say nothing about what is built or which trades build it.
 */
const DEMOLISHED_PART = `\\b(?:demoli\\w*${NOT_A_BUILDING}|knock\\w* down|remov\\w* (?:of )?(?:the )?(?:existing )?(?=(?:[\\w-]+ ){0,2}?(?:garages?|sheds?|extensions?|conservatory|porch|outbuildings?|annexe?|returns?|utility|kitchen|sun ?room|lean-to)))[^;]*?(?=\\b(?:construct|erect|build|provi|replace|new\\b|install|widen|creat|form|convert|extend|refurbish|renovat|alter|internal|with\\b|to allow|to provide|to facilitate|to create)|$)`;

/**
 * Where a vehicle gets in: new, widened or altered vehicular entrances and accesses, driveways,
 * off-street and front-garden parking (groundworks and landscaping, docs/data-quality.md).
 */
const ENTRANCE_SRC =
  '(?:vehicular|vehicle|car|site) (?:entrance|access)\\b|vehiculaar entrance|entrance driveway|driveway|off[- ]?street (?:car )?parking|car parking space|parking (?:space )?(?:to|in|at) (?:the )?front|vehicular parking|widen\\w* (?:of )?(?:the )?(?:existing )?(?:front )?entrance|dishing';
/** A sports pitch (not "pitched roof"). */
const PITCH_SRC =
  '(?:all[- ]weather|training|playing|gaa|football|soccer|rugby|hurling|sports?|astro ?turf) (?:[\\w-]+ )?pitch(?:es)?\\b';

/** The trade verticals, in published order. `classifyApplication` returns a sorted subset. */
export const VERTICALS: readonly Vertical[] = [
  {
    code: 'agricultural_buildings',
    label: VERTICAL_LABELS['agricultural_buildings']!,
    keywords: kw(
      /agricultur|slatted|cattle|milking|parlour|silage|slurry|livestock|poultry|piggery|hay ?barn|cubicle|calf|calving|dairy|\bstables?\b|farm ?yard|farm (?:building|shed)|farms?\b(?<!(?:solar|wind|server|data|fish) farms?)(?! ?house| dwelling)|(?:straw|hay|fodder|meal|machinery|general purpose|cattle|sheep|calf|hay) (?:shed|store|bin)s?|machinery shed|lambing|sheep|grain store|animal housing|manure|equine/i,
    ),
    nace: ['2511', '1623'],
  },
  {
    code: 'concrete',
    label: VERTICAL_LABELS['concrete']!,
    keywords: kw(/concrete|precast|\bslabs?\b|slatted|\bsilos?\b|underground (?:slurry )?tank|retaining wall/i),
    nace: ['2361', '2363'],
  },
  {
    code: 'data_centre_fitout',
    label: VERTICAL_LABELS['data_centre_fitout']!,
    keywords: kw(
      /data (?:centre|center|hall|storage facilit|processing)|datacent|hyperscale|server (?:hall|farm|room)|colocation/i,
    ),
    nace: ['4321', '4322'],
  },
  {
    code: 'demolition',
    label: VERTICAL_LABELS['demolition']!,
    keywords: kw(new RegExp(DEMOLITION_SRC)),
    nace: ['4311'],
  },
  {
    code: 'electrical',
    label: VERTICAL_LABELS['electrical']!,
    keywords: kw(
      /(?<!waste )electric|(?<!electrical (?:&|and) )electronic|lighting|rewir|wiring|sub-?station|\bcables?\b|\bkv\b|\d\s?kv\b|switch ?room|meter room|transformer|\besb\b/i,
    ),
    nace: ['4321'],
  },
  {
    code: 'ev_charging',
    label: VERTICAL_LABELS['ev_charging']!,
    keywords: kw(
      /\bev\b|electric vehicle|e-car|charging (?:points?|stations?|bays?|hub|spaces?|infrastructure)|car charg/i,
    ),
    nace: ['4321'],
  },
  {
    code: 'flooring',
    label: VERTICAL_LABELS['flooring']!,
    keywords: kw(/flooring|floor (?:finish|covering)|tiling|screed|carpet|timber floor/i),
    nace: ['4333'],
  },
  {
    code: 'glazing_facades',
    label: VERTICAL_LABELS['glazing_facades']!,
    keywords: kw(
      /(?<!obscure |\bon (?:the )?(?:existing )?)glaz(?!\w* rooflight)|curtain wall|(?<!(?:insulat|render|paint|clean|dash)\w* (?:[\w-]+ ){0,6})fa[cç]ade|cladding|(?<!(?:sign|letter|fascia|logo|banner)\w*(?: [\w-]+){0,4} (?:to|on|above|over|within|in) (?:the )?(?:existing )?)shop ?fronts?|atrium|glass(?!\w* ?house)/i,
    ),
    nace: ['4334', '2312'],
  },
  {
    code: 'groundworks',
    label: VERTICAL_LABELS['groundworks']!,
    keywords: kw(
      new RegExp(
        `excavat|foundation|site (?:clearance|preparation)|drainage|(?<!existing (?:[\\w-]+ ){0,3})(?:over|new|with) basement|basement (?:extension|excavation|car ?park)|underpinning|septic|percolation|wastewater|waste water|sewer|soakaway|attenuation|access road|(?:new|revised|relocat\\w*|alter\\w*) (?:vehicular|site|car) entrance\\b|entrance (?:gate|way|road)|${ENTRANCE_SRC}|(?<!existing |overflow )car ?park(?!ing)|earthworks|infill|land ?fill|retaining wall|road ?works|culvert|hard ?standing|underground (?:fuel )?(?:storage )?tanks?|${PITCH_SRC}`,
      ),
    ),
    nace: ['4312'],
  },
  {
    code: 'heat_pumps',
    label: VERTICAL_LABELS['heat_pumps']!,
    keywords: kw(/heat pump|air[- ]to[- ]water|air source|ground source|geothermal/i),
    nace: ['4322'],
  },
  {
    code: 'hvac',
    label: VERTICAL_LABELS['hvac']!,
    keywords: kw(
      /hvac|ventilat|air[- ]condition|air handling|mechanical plant|(?:external |roof ?top )?plant (?:room|area|enclosure|equipment)|external plant|chiller|cooling|extract(?:ion)? (?:system|duct|fan|flue|unit)|extraction|\bmvhr\b|\bflues?\b|\bstack\b/i,
    ),
    nace: ['4322'],
  },
  {
    code: 'insulation',
    label: VERTICAL_LABELS['insulation']!,
    keywords: kw(
      /insulat|external wall (?:insulation|wrap)|\bewi\b|retrofit|energy[- ](?:upgrade|efficien)|airtight|thermal upgrade|dry[- ]lining/i,
    ),
    nace: ['4329'],
  },
  {
    code: 'kitchens_interiors',
    label: VERTICAL_LABELS['kitchens_interiors']!,
    keywords: kw(
      /(?<!existing (?:domestic )?)kitchen|interior|fit[- ]?out|internal (?:alterations?|works|modifications?|reconfiguration|layout|changes|refurbishment|renovation)|refurbish\w*(?! (?:of )?(?:the )?(?:existing )?shop ?front)|renovat|remodel|joinery|bathroom|utility room|amalgamat|sub-?divi|upgrading works|layout modifications|reconfiguration of (?:the )?internal|(?<!escape |fire )stair(?:s|way|case)/i,
    ),
    nace: ['3102', '4339'],
  },
  {
    code: 'landscaping',
    label: VERTICAL_LABELS['landscaping']!,
    keywords: kw(
      new RegExp(
        `landscap|boundary (?:walls?|treatment|fence|fencing|railings)|garden (?:walls?|design|works|alterations)|(?:alterations|works|modifications) to (?:the )?(?:front |rear |back |side )?garden|patio|paving|planting|pedestrian (?:access|gate|entrance)|public realm|amenity space|playground|play ?area|decking|railings|\\bgates?\\b|fenc(?:e|ing)\\b|netting|front (?:boundary )?wall|stone wall|${ENTRANCE_SRC}|${PITCH_SRC}`,
      ),
    ),
    nace: ['8130'],
  },
  {
    code: 'plumbing_heating',
    label: VERTICAL_LABELS['plumbing_heating']!,
    keywords: kw(
      /plumb|heating|boiler|solar (?:thermal|water)|bathroom|en[- ]?suite|sanitary|w\.?c\b|toilets?\b|shower|water supply|water tank|septic|wastewater treatment|underfloor/i,
    ),
    nace: ['4322'],
  },
  {
    code: 'roofing',
    label: VERTICAL_LABELS['roofing']!,
    keywords: kw(
      /(?<!\bon (?:the |a )?(?:existing |main |flat )?)roof(?!top| level|[- ]mounted)|dormer|re-roof|slat(?:e|es|ing)\b|velux|mansard/i,
    ),
    nace: ['4391'],
  },
  {
    code: 'scaffolding',
    label: VERTICAL_LABELS['scaffolding']!,
    keywords: kw(
      /scaffold|(?<!existing )(?:three|four|five|six|seven|eight|nine|ten|eleven|twelve|[3-9]|\d{2})[- ]?(?:to [\w-]+ )?stor(?:e)?y|(?<!existing )storeys\b|high[- ]rise|tower crane|(?:third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) floor|two floors/i,
    ),
    nace: ['4399'],
  },
  {
    code: 'security_fire',
    label: VERTICAL_LABELS['security_fire']!,
    keywords: kw(
      /fire (?:alarm|safety|escape|door|certificate|station|exit|stairs?|suppression)|sprinkler|cctv|security|access control|\balarms?\b|intruder|(?:pole|vehicle|security|electronic|car park) barrier/i,
    ),
    nace: ['8020'],
  },
  {
    code: 'signage_shopfronts',
    label: VERTICAL_LABELS['signage_shopfronts']!,
    keywords: kw(
      /signage|\bsigns?\b|(?<!(?:sign|letter|fascia|logo|banner)\w*(?: [\w-]+){0,4} (?:to|on|above|over|within|in) (?:the )?(?:existing )?)shop ?fronts?|advertis|fascia|totem|billboard|illuminated (?:sign|box|logo|lettering)|digital display|display (?:panel|screen|banner)s?|lettering|banners?\b|flag ?poles?|\blogo|sun[- ]?blind|awning|promotional/i,
    ),
    nace: ['3299'],
  },
  {
    code: 'solar',
    label: VERTICAL_LABELS['solar']!,
    keywords: kw(/solar|photovoltaic|\bpv\b/i),
    nace: ['4321', '3511'],
  },
  {
    code: 'steel_structures',
    label: VERTICAL_LABELS['steel_structures']!,
    keywords: kw(
      /\bsteel|portal frame|structural frame|mezzanine|\bbarns?\b|(?:agricultural|farm|machinery|slatted|hay|straw|cattle|sheep|fodder|general purpose|loose[- ]bedded) (?:[\w-]+ )?sheds?\b|forecourt canop|steel canop|canopy structure/i,
    ),
    nace: ['2511'],
  },
  {
    code: 'telecoms',
    label: VERTICAL_LABELS['telecoms']!,
    keywords: kw(
      /telecom|\bmasts?\b|antenna|\b5g\b|monopole|lattice (?:tower|structure|mast)|communications? (?:structure|tower|infrastructure|equipment|installation|cabinet)|broadband|\bdish(?:es)?\b|satellite|splitter box|splinter box|street ?pole|small cell/i,
    ),
    nace: ['4222', '6110', '6120'],
  },
  {
    code: 'windows_doors',
    label: VERTICAL_LABELS['windows_doors']!,
    keywords: kw(
      /window|(?<!existing (?:staff )?(?:entrance |front |main )?)doors?\b|doorway|fenestration|porch|patio door|bi-?fold|french door/i,
    ),
    nace: ['4332', '1623'],
  },
];

/** The sets of verticals the labelling policy implies for a kind of build (docs/data-quality.md). */
const SHELL = ['groundworks', 'roofing', 'windows_doors', 'electrical', 'insulation'] as const;
const HOUSE_SET = [...SHELL, 'plumbing_heating', 'kitchens_interiors', 'flooring'] as const;
const FULL_SET = [...HOUSE_SET, 'scaffolding', 'security_fire'] as const;

/**
 * Verticals a **new building** of a use class implies, whatever its description says (a new house
 * always needs a roofer, an electrician, …); added to the keyword matches. Works to an existing
 * building imply verticals by their kind instead (`BUILD_VERTICALS`): an extension its shell, a
 * change of use its fit-out. Two storeys or more add scaffolding.
 */
export const USE_CLASS_VERTICALS: Readonly<Record<string, readonly string[]>> = {
  house: HOUSE_SET,
  residential_multi: HOUSE_SET,
  mixed_use: FULL_SET,
  residential_extension: SHELL,
  data_centre: [
    'data_centre_fitout',
    'electrical',
    'hvac',
    'security_fire',
    'steel_structures',
    'concrete',
    'groundworks',
  ],
  energy: ['electrical', 'groundworks'],
  telecoms: ['telecoms'],
  agricultural: ['agricultural_buildings', 'steel_structures', 'concrete'],
  warehouse_logistics: [...SHELL, 'steel_structures', 'concrete', 'security_fire'],
  industrial: SHELL,
  office: FULL_SET,
  retail: SHELL,
  hospitality: FULL_SET,
  education: FULL_SET,
  healthcare: FULL_SET,
  community: SHELL,
  commercial: SHELL,
  change_of_use: ['kitchens_interiors'],
  other: SHELL,
};

/** Use classes whose defaults apply to any of their works, not only a new building (the whole project is the trade). */
const WHOLE_PROJECT_CLASSES: ReadonlySet<string> = new Set(['energy', 'telecoms', 'agricultural']);

/** Verticals implied by the kind of works to a building (docs/data-quality.md, "Implied"). */
export const BUILD_VERTICALS = {
  extension: SHELL,
  'two-storey extension': [...SHELL, 'scaffolding'],
  'first-floor extension': ['roofing', 'windows_doors', 'electrical', 'insulation', 'scaffolding'],
  'attic or garage conversion': ['insulation', 'electrical'],
  'garage or shed': ['groundworks', 'roofing', 'windows_doors'],
  'change of use': ['kitchens_interiors'],
  'change of use to food': ['kitchens_interiors', 'hvac'],
  'change of use to medical': ['kitchens_interiors', 'plumbing_heating'],
  'apartment building': FULL_SET,
  'building of three storeys or more': FULL_SET,
} as const satisfies Record<string, readonly string[]>;

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
  house: 2_400,
  residential_extension: 2_200,
  residential_multi: 2_900,
  mixed_use: 2_700,
  commercial: 2_000,
  retail: 1_800,
  office: 3_200,
  industrial: 1_300,
  warehouse_logistics: 1_100,
  data_centre: 12_000,
  agricultural: 450,
  hospitality: 2_800,
  education: 2_600,
  healthcare: 3_500,
  community: 2_200,
  energy: 1_500,
  telecoms: 2_000,
  change_of_use: 1_200,
  other: 1_500,
};

/** Build cost per residential unit when no floor area is known (EUR, 2026). */
export const UNIT_COST: Readonly<Record<string, number>> = {
  house: 320_000,
  residential_multi: 320_000,
  mixed_use: 320_000,
  change_of_use: 200_000,
};

/** Typical project value by use class when neither floor area nor units are known (EUR, 2026). */
export const TYPICAL_VALUE: Readonly<Record<string, number>> = {
  house: 380_000,
  residential_extension: 60_000,
  residential_multi: 2_500_000,
  mixed_use: 5_000_000,
  commercial: 400_000,
  retail: 150_000,
  office: 1_500_000,
  industrial: 1_200_000,
  warehouse_logistics: 3_000_000,
  data_centre: 80_000_000,
  agricultural: 90_000,
  hospitality: 600_000,
  education: 1_500_000,
  healthcare: 2_000_000,
  community: 350_000,
  energy: 2_000_000,
  telecoms: 60_000,
  change_of_use: 120_000,
  other: 50_000,
};

/**
 * Typical values for small single-trade jobs recognised from the description. They replace the
 * use-class typical value when the description is only that job (no new build, no extension).
 * Energy projects with a stated capacity are valued per MW instead (see ENERGY_VALUE_PER_MW).
 */
export const TYPICAL_JOB_VALUE: readonly { job: string; pattern: RegExp; value: number }[] = [
  { job: 'solar_retrofit', pattern: /solar|photovoltaic|\bpv\b/i, value: 12_000 },
  { job: 'signage', pattern: /signage|\bsigns?\b|advertis|fascia|totem|billboard/i, value: 8_000 },
  {
    job: 'ev_charging',
    pattern: /charging (?:points?|stations?|bays?|spaces?)|electric vehicle|\bev\b/i,
    value: 25_000,
  },
  { job: 'heat_pump', pattern: /heat pump/i, value: 15_000 },
  { job: 'windows_doors', pattern: /replacement (?:of )?(?:the )?(?:existing )?windows|new windows/i, value: 20_000 },
];

/** Value per MW of stated capacity for energy projects (EUR, 2026). */
export const ENERGY_VALUE_PER_MW = 1_000_000;

/** Regional build-cost factor by county; counties not listed use 1.0. */
export const REGIONAL_FACTOR: Readonly<Record<string, number>> = {
  Dublin: 1.15,
  Cork: 1.05,
  Galway: 1.05,
  Kildare: 1.05,
  Meath: 1.05,
  Wicklow: 1.05,
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
// Reading a description: who is applying, the register's prefix codes

/**
 * "I, John Smith, intend to apply for permission for …", "We, A & B Murphy, wish to apply …",
 * "John Smith intends to apply for …": the applicant's own words, which may name a person. Cut
 * before anything is classified, so a name can neither match a keyword ("Mary Glass" is not
 * glazing) nor reach the evidence.
 */
const PERSON_CLAUSE =
  /^\s*(?:(?:i|we)\s*,[^;]{1,200}?,?\s*|[^,.;:]{1,80}?\b)(?:intends?|wish(?:es)?|proposes?|seeks?|am applying|are applying|is applying)\b\s+(?:to\s+)?(?:apply\s+)?(?:to\s+[^,;]{1,60}?\s+)?(?:for\s+)?/i;
/** Lower-cased description without the applicant's own words. */
function withoutPerson(description: string): string {
  const lower = description.toLowerCase().replace(/\bend of terrace\b/g, 'end-of-terrace');
  return PERSON_CLAUSE.test(lower) && /\bapply|\bapplying/.test(lower.slice(0, 200))
    ? lower.replace(PERSON_CLAUSE, '')
    : lower;
}

/**
 * The register's prefix codes and opening words ("EXPP:", "SHEC -", "PROTECTED STRUCTURE -",
 * "RETENTION:", "EXTENSION OF DURATION -", "Permission for", "(1 unit)"): stripped before the use
 * class and the kind of build are read (the kind of works reads them first).
 */
const PREFIX =
  /^[\s:;,.&()\-–]*(?:expp|shec|law|protected stru\w*|(?:permanent )?retention(?: permission)?|(?:planning )?permission(?: is)?(?: sought)?|ext(?:ension|\.|n)?\.? ?(?:of )?duration|proposed|(?:the )?development (?:will )?consists? of(?: the)?|\(\s*retention\s*\)|\(\s*\d+\s*units?\s*\)|\d+\s*units?\b|a\))(?:\s*(?:for|to|of|comprising)\b)?/;
function stripPrefixes(lower: string): string {
  let d = lower;
  for (let k = 0; k < 6; k++) {
    const next = d.replace(PREFIX, '');
    if (next === d) break;
    d = next;
  }
  return d.replace(/^[\s:;,.&()\-–]+/, '');
}
const SHEC = /^\W*(?:[a-z ]*[:\-–]\s*)?shec\b/;

// ---------------------------------------------------------------------------------------------
// Use class

const HOUSE_LOOKBEHIND =
  '(?<!public\\s|guest\\s|glass\\s|green\\s|pump\\s|boat\\s|club\\s|nursing\\s|care\\s|light\\s|tea\\s|coach\\s|hen\\s|meeting\\s|plant\\s|control\\s|switch\\s|bath\\s|school\\s|dog\\s|ice\\s|store\\s|wash\\s|power\\s|pack\\s|packing\\s|slaughter\\s|gate\\s|summer\\s|pool\\s|ware|court\\s|alms\\s|opera\\s|poly\\s|out\\s|funeral\\s|retirement\\s|town)';
const RES_NOUN_SRC = `\\b(?:dwel\\w*|${HOUSE_LOOKBEHIND}houses?|bungalows?|residences?|cottages?|domestic|${HOUSE_LOOKBEHIND}homes?|farmhouse|apartment)\\b`;
/** A word between "construction of" and "dwelling" that does not turn it into works to an existing one. */
const FILLER =
  '(?:(?!extension|existing|to\\b|the\\b|rear\\b|side\\b|front\\b|of\\b|at\\b|for\\b|with\\b)[\\w.&/,-]+\\s+)';
const DWELLING = `(?:dwel\\w*|${HOUSE_LOOKBEHIND}house|bungalow|farmhouse|${HOUSE_LOOKBEHIND}home|residence|cottage|mews)\\b`;
const NEW_HOUSE = new RegExp(
  `\\b(?:new|replacement|(?:construct|erect|build|provi)\\w*(?:\\s+of)?)\\s+(?:a\\s+|an\\s+|one\\s+)?${FILLER}{0,7}?${DWELLING}|one[- ]off (?:rural )?(?:dwelling|house)|\\bin (?:the )?(?:side|rear|back|front) garden of (?:a |an )?(?:(?!existing\\b)[\\w-]+ ){0,4}?${DWELLING}`,
);
/** A description that opens with the dwelling it builds ("Detached 2-storey house with …", "Dormer style dwelling to the rear"). */
const HOUSE_OPENING = new RegExp(
  `^(?:a |an |one |new )*(?:(?!existing\\b|to\\b|of\\b)[\\w/,.-]+ ){0,5}?(?:detached|semi-detached|attached|terraced|dormer style|dormer|infill|mews|storey,?|bedroom|bed|bungalow) (?:[\\w,-]+ ){0,3}?(?:${DWELLING}|residential unit)|^(?:a |an )?(?:new )?dormer bungalow`,
);
const RES_NOUN = new RegExp(RES_NOUN_SRC);
const EXT_WORDS =
  /extension|extend|alteration|renovat|refurbish|conversion|convert|dormer|porch|attic|modification|retention|upgrad/;
const NUMBER_WORD = '(?:[2-9]|[1-9][\\d,]+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty)';
const MULTI = new RegExp(
  `\\bapartments\\b|apartment (?:building|block|development)|\\bduplex(?:es| units)\\b|\\btownhouses\\b|housing (?:scheme|development|estate)|residential (?:development|scheme)|\\b(?:lrd|shd)\\b|strategic housing|large[- ]scale residential|student accommodation|social housing|build[- ]to[- ]rent|\\b${NUMBER_WORD}\\s*(?:no\\.?\\s*)?(?:[\\w-]+\\s+){0,3}?(?:houses|dwellings|dwelling units|residential units|housing units|homes|apartment units)\\b`,
);

/**
 * Use-class patterns, lower-case and matched at word starts, in the order `classifyUseClass`
 * consults them (the unit count and one-off-house flag are interleaved there).
 */
const USE_CLASS_PATTERNS = {
  data_centre:
    /data (?:centres?|centers?|halls?|storage facilit|processing (?:centre|facilit))|datacent|hyperscale|server (?:halls?|farm)|colocation/,
  energy:
    /solar (?:farm|park|array|energy (?:farm|development|park)|(?:pv )?(?:energy )?development|power (?:plant|station))|photovoltaic (?:solar )?(?:farm|park|array|energy development|development)|wind (?:farm|energy|turbines?)|battery (?:energy )?storage|\bbess\b|energy storage|(?:electricity|transmission|grid) sub-?station|\d+\s?kv (?:sub-?station|substation|grid|cable|line|transmission)|grid connection|\b\d+(?:\.\d+)?\s?mw\b|anaerobic digest|biogas|biomethane|hydrogen|synchronous condenser|interconnector|power station|renewable energy development/,
  telecoms:
    /telecom|\bmasts?\b|antenna|\b5g\b|monopole|lattice (?:tower|structure|mast)|communications? (?:structure|tower|infrastructure|equipment|installation)|street ?pole|small cell|satellite (?:\w+ )?dish/,
  mixed_use:
    /mixed[- ]use|(?:ground floor|commercial|retail|office|creche) (?:units?|space|use)\b[^;]{0,120}?\b(?:apartments|residential units|duplex)|(?:apartments|residential units)\b[^;]{0,120}?\b(?:ground floor|commercial|retail|office) (?:units?|space)\b/,
  change_of_use:
    /change (?:of )?use|changes? of use|material change|\bto use as\b|\buse of (?:the )?(?:existing )?(?:premises|unit|building|ground floor|first floor)s? as\b|\badditional use\b|\b(?:ancillary|additional) [\w-]+ use\b|^(?:the )?use of [^.;]{1,60}? as\b|\b(?:office|retail|commercial|residential|industrial) use of\b/,
  multi: MULTI,
  new_house: NEW_HOUSE,
  ext_words: EXT_WORDS,
  healthcare:
    /hospital|clinic\b|nursing home|care (?:home|facility|centre)|medical|primary care|health ?(?:care )?centre|dental|\bgp\b|doctors'? surgery|hospice|step[- ]down|mental health|\bhse\b|residential care|outpatient|in[- ]?patient|paediatric|cardiolog|therap|physio/,
  hospitality:
    /hotel|guest ?house|\bb ?& ?b\b|bed (?:and|&) breakfast|restaurant|caf[eé]\b|public house|\bpub\b|\bbar\b|takeaway|take-away|hostel|glamping|holiday (?:homes|lodges|chalets|cottages|accommodation)|self[- ]catering|tourist accommodation|tourism/,
  education:
    /school|college|university|classrooms?|cr[eè]che|childcare|montessori|pre-school|campus|educational|gaelscoil|third level/,
  agricultural: new RegExp(inner(VERTICALS.find((v) => v.code === 'agricultural_buildings')!.keywords)),
  res_noun: RES_NOUN,
  warehouse_logistics:
    /warehous|logistics|distribution (?:centre|center|hub|building|units?)|cold stor|self[- ]storage|storage (?:buildings?|units?|facilit\w*|sheds?)|fulfil?ment centre/,
  industrial:
    /industrial|factory|manufactur|workshop|quarry|processing (?:plant|facility|building)|enterprise (?:units?|centre)|waste (?:management|transfer|facility|recovery)|recycling|production (?:building|facility|hall)|engineering works|laborator|pharmaceutical|batching plant|asphalt plant|maintenance facility/,
  office: /\boffices?\b|co-?working/,
  retail:
    /retail|\bshops?\b(?! ?fronts?)|shopping|food ?store|convenience store|shop ?fronts?|supermarket|(?<!(?:bin|garden|storage|fuel|refuse|bicycle|bike|tool|hotel) |\b(?:to|as|for|into) (?:an? )?)\bstores?\b(?! ?rooms?| in (?:the )?(?:rear |back |side )?garden)|petrol (?:station|filling)|fuel (?:storage )?tanks?|service station|filling station|forecourt|showroom|car sales|pharmacy|off[- ]licen[cs]e|signage|lidl|aldi|tesco|dunnes|spar\b|centra\b/,
  community:
    /community|church|parish|sports|\bgaa\b|(?:football|rugby|tennis|golf|sports|boxing|hurling|soccer) club|clubhouse|playground|library|garda station|fire station|civic|cemetery|graveyard|burial|\bpitch(?:es)?\b|all[- ]weather|leisure centre|swimming pool|public realm|greenway|footpath|cycle ?(?:way|lane|path|track)|amenity|public park|playing fields?|heritage|museum|theatre|arts centre|mosque|scout|men'?s shed|tennis|habitat|play area|spirituality|religious/,
  commercial:
    /commercial|business|enterprise|car park(?!ing)|\bbank\b|\bgym\b|fitness|veterinary|car wash|funeral home|garage for (?:the )?repair|motor (?:repair|garage)|vehicle repair|bookmaker/,
} as const;
type UsePattern = keyof typeof USE_CLASS_PATTERNS;
const USE_PATTERN_NAMES = Object.keys(USE_CLASS_PATTERNS) as UsePattern[];
/** The patterns compiled to match at word starts only (a position test before any alternative). */
const USE_RE = Object.fromEntries(
  USE_PATTERN_NAMES.map((k) => [k, new RegExp(`\\b(?:${USE_CLASS_PATTERNS[k].source})`)]),
) as Record<UsePattern, RegExp>;
/** The use classes decided by a pattern alone, in order, after the residential ones. */
const SECTOR_ORDER: readonly (UsePattern & string)[] = [
  'healthcare',
  'hospitality',
  'education',
  'agricultural',
  'res_noun',
  'warehouse_logistics',
  'industrial',
  'office',
  'retail',
  'community',
  'commercial',
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
const DEMOLITION_CLAUSE =
  /^(?:permission (?:for|to) )?(?:the )?(?:demolition of|demolish|removal of|remove) (?:the )?(?:existing )?(?:[^\s,]+ ){0,6}?(?:and|,|&) /;

/**
 * Works to a home, for descriptions that name no building ("single storey rear extension",
 * "widen existing vehicular access"): in a planning register these are almost all houses.
 */
const DOMESTIC_HINT = new RegExp(
  `\\b(?:extensions?|extend|dormer|attic|porch|garden room|sun ?room|conservatory|kitchen|family room|bedrooms?|en-?suite|utility room|living (?:room|space|area)|granny flat|home office|rooflights?|velux|re-roofing|decking|${ENTRANCE_SRC}|(?:front|rear|back|side) garden|boundary walls?|garages?|bay window|return|pigeon lofts?|external insulation|vehicular gates?)\\b`,
);

type UseClassRow = Pick<PlanningRow, 'description' | 'land_use_code' | 'num_units' | 'one_off_house' | 'floor_area_m2'>;

/**
 * Decide a planning application's use class from its description, falling back on its land use
 * code and unit count. Rules are tested in `USE_CLASS_CODES` order (common/lead-vocabulary.ts); the first that matches wins, so
 * "construction of a data centre with ancillary offices" is `data_centre`, not `office`. A
 * `SHEC` prefix (Dublin City's social-housing exemption certificate) is a new dwelling.
 *
 * @example classifyUseClass({ description: 'Single storey extension to rear of dwelling', land_use_code: null,
 *   num_units: null, one_off_house: false, floor_area_m2: 30 }) // 'residential_extension'
 */
export function classifyUseClass(row: UseClassRow): string {
  const lower = withoutPerson(row.description);
  return useClassOf(row, lower, stripPrefixes(lower));
}

function useClassOf(row: UseClassRow, lower: string, stripped: string): string {
  const d = stripped.replace(DEMOLITION_CLAUSE, '');
  const u = useClassOfText(row, lower, d);
  // "Demolish existing vehicle repair workshop & other works": what comes down is all it says.
  return u === 'other' && d !== stripped ? useClassOfText(row, lower, stripped) : u;
}

function useClassOfText(row: UseClassRow, lower: string, d: string): string {
  if (USE_RE.data_centre.test(d)) return 'data_centre';
  if (USE_RE.energy.test(d)) return 'energy';
  if (USE_RE.telecoms.test(d)) return 'telecoms';
  if (USE_RE.change_of_use.test(d)) return 'change_of_use';
  if (USE_RE.mixed_use.test(d)) return 'mixed_use';
  const units = row.num_units ?? 0;
  if (units >= 2 || USE_RE.multi.test(d)) return 'residential_multi';
  if (
    row.one_off_house ||
    SHEC.test(lower) ||
    USE_RE.new_house.test(d) ||
    (HOUSE_OPENING.test(d) && !USE_RE.ext_words.test(d.replace(/\bdormer (?:style|bungalow)/g, '')))
  )
    return 'house';
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
// Kind of works

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

/** The kind of works a description states, in this order (the first that matches wins). */
const TEXT_KINDS: readonly { re: RegExp; kind: WorksKind }[] = [
  {
    re: /^\W*(?:[a-z ]*[:\-–]\s*)?expp\b|\bsection\s*(?:5|57)\b|\bdeclaration\b|\bexempted development\b/,
    kind: 'declaration',
  },
  { re: /\bext(?:ension|\.|n)?\.?\s*(?:of\s*)?duration\b/, kind: 'extension_of_duration' },
  { re: /\bretention\b|\bretain(?:s|ed)?\b|\bcontinuance\b|\bcontinued use\b/, kind: 'retention' },
  {
    re: /^\W*(?:permission (?:for|to) )?(?:proposed )?(?:minor )?(?:amendments?|alterations?|modifications?|changes?|revisions?|variations?)\b[^.;]{0,40}?\b(?:previously|approved|permitted|granted|permission|planning (?:application|permission|ref)|reg\.?(?: ref)?\.? no|ref\.?(?: no)?\.? ?\d|conditions?\b)|\b(?:amendments?|alterations?|modifications?|changes?|revisions?|variations?) to (?:the |a )?(?:previously |already )?(?:approved|permitted|granted|previous)\b|\b(?:amendments?|alterations?|modifications?|revisions?) to (?:the )?plans (?:permitted|approved|granted)|\b(?:compliance with|alteration to|variation of|amendment to|omission of) condition|^\W*(?:reduction|increase) in (?:the )?(?:height|size|floor area|ridge)[^.;]{0,30}\bproposed\b/,
    kind: 'amendment',
  },
  { re: /\boutline (?:planning )?permission\b/, kind: 'outline' },
];
/** New works named beside a retention ("Permission for … & Retention for …", "RETENTION & PERMISSION"). */
const PERMISSION_TOO =
  /(?<!retention )\bpermission\s+(?:is\s+)?(?:sought\s+)?(?:for|to)\b|retention\s*(?:&|and)\s*permission|permission\s*(?:&|and|,)\s*retention|^\W*permission\s*:/;
/** Dublin City's references of extension-of-duration applications end in /x1, /x2 … */
const DURATION_REF = /\/x\d+\s*$/i;

/**
 * The kind of works (`works_kind`): from the application type where it states one, else from the
 * description (and, for Dublin City, the /xN reference of a duration extension). An application
 * to retain works and build new ones is `new_works`.
 *
 * @example classifyWorksKind({ description: 'RETENTION - 1.8m high boundary wall' }) // 'retention'
 */
export function classifyWorksKind(
  i: Pick<ClassifyInput, 'description' | 'application_type' | 'application_number'>,
): WorksKind {
  const fromType = worksKindOfType(i.application_type);
  if (fromType !== null) return fromType;
  if (i.application_number && DURATION_REF.test(i.application_number)) return 'extension_of_duration';
  return worksKindOfText(withoutPerson(i.description));
}

function worksKindOfText(lower: string): WorksKind {
  for (const r of TEXT_KINDS) {
    if (!r.re.test(lower)) continue;
    if (r.kind === 'retention' && PERMISSION_TOO.test(lower)) return 'new_works';
    return r.kind;
  }
  return 'new_works';
}

// ---------------------------------------------------------------------------------------------
// Verticals, evidence and demolition

const VERTICAL_ORDER = new Map<string, number>(VERTICALS.map((v, i) => [v.code, i]));
const DEMOLITION = new RegExp(`\\b(?:${DEMOLITION_SRC})`, 'i');
const scanVerticals = keywordScanner(VERTICALS.map((v) => inner(v.keywords)));
const DEMOLITION_INDEX = VERTICAL_ORDER.get('demolition')!;
const DEMOLISHED_GLOBAL = new RegExp(DEMOLISHED_PART, 'g');
/** Each vertical's keywords as a global regex, to list what matched (the evidence). */
const VERTICAL_GLOBAL = VERTICALS.map((v) => new RegExp(`\\b(?:${inner(v.keywords)})`, 'g'));

/** What the works build, read from the description without its prefixes (docs/data-quality.md). */
const BUILD = {
  /** Something knocked down: it is not what is built ("demolish rear extension & construct …"). */
  demolished: new RegExp(DEMOLISHED_PART, 'g'),
  /** "Extension" that is not a building's: of a driveway, an entrance, a pitch, a dormer. */
  notBuilding:
    /\bextension (?:of|to) (?:the )?(?:existing )?(?:vehicular |front )?(?:driveway|entrance|access|car ?park|pitch)|\bextend (?:the )?(?:existing )?(?:vehicular )?(?:driveway|entrance|access|football pitch|pitch)|\b(?:dormer(?: window)?|(?<!flat |flat-roofed |pitched |lean[- ]to |hipped )roof) extension|extension of (?:the )?duration/g,
  extension:
    /\bextension|\bextend(?!ed)|\bporch|sun ?room|conservatory|garden room|entertainment room|granny flat|\breturn\b|increas\w* (?:the )?(?:gross )?floor (?:space|area)|additional \d+ ?sq/,
  firstFloor:
    /(?<!existing )(?:first[- ]floor (?:(?:rear|side|front|level) )?(?:[\w-]+ ){0,4}?extension|extension at first floor|1st floor extension)|(?:extension|storey|floor) over (?:the )?existing|\bnew storey|additional (?:two )?(?:floors?|storeys?)|addition of (?:a |two |three |an? )?(?:new |additional )?(?:storey|floors?)|\bmansard|two floors over|\b(?:con?struct\w*|addition|erect\w*)(?: of)? (?:an? )?(?:new )?(?:second|third|fourth|2nd|3rd|4th|additional) (?:floor|storey)/,
  ground:
    /(?<!existing (?:[\w-]+ )?)(?:\bsingle[- ]storey|\bone[- ]storey|\b1[- ]storey|\bground[- ]floor|\bground level)|lower ground|one ?\/ ?two/,
  twoStorey:
    /(?<!(?<!(?:construction|erection|provision|consists?|comprising) )\b(?:of|to) (?:an? |the )?(?:existing )?)(?<!existing )\b(?:two|2|double)[- ]?stor(?:e)?y|\b(?:two|2)[- ]storeys\b/,
  threePlus:
    /(?<!existing )\b(?:three|four|five|six|seven|eight|nine|ten|eleven|twelve|[3-9]|\d{2})[- ]?(?:to [\w-]+ )?stor(?:e)?y/,
  attic:
    /\battic (?:roof )?(?:dormer )?(?:conversion|extension|room|space|storage|bedroom|study|level|accommodation|floor)|\bconver\w* (?:of )?(?:the )?(?:existing )?(?:attic|loft|roof space|(?:domestic |detached |integral |single storey )?garage)|\b(?:attic|loft|garage) conver/,
  garage:
    /\b(?:construct\w*|erect\w*|build\w*|new|provision of|\d+(?: no\.?)?)\s+(?:of\s+)?(?:an?\s+)?(?:[\w-]+\s+){0,2}?(?:garages?|sheds?|storerooms?|outbuildings?|pigeon lofts?)\b/,
  newBuilding:
    /\b(?:construct(?!ed)\w*|erect\w*|build\w*|new|provision of)\s+(?:of\s+)?(?:an?\s+|\d+\s*(?:no\.?\s*)?)?(?:[\w'./-]+\s+){0,5}?(?:buildings?|facilit(?:y|ies)|centre|center|clubhouse|hall|studio|sub-?station|meter room|switch ?room|(?<!concrete )blocks?|structure|pavilion|school|hotel|warehouse|units?|supermarket|shop|foodstore|restaurant|offices?|church|library|depot|factory)\b|(?<!existing (?:[\w.]+ )?)(?<!(?<!(?:construction|erection|provision|consists?|comprising) )\b(?:of|to|throughout|at|in) (?:an? |the )?)\b(?:single|one|two|three|four|five|[1-9])[- ]storey\s+(?:[\w'-]+\s+){0,3}?(?:buildings?|clubhouse|structure|block|centre|sub-?station)s?\b/,
  apartments: /apartment|duplex|\bflats?\b/,
  food: /restaurant|caf[eé]|coffee|take[- ]?away|takeaway|food|pizza|diner|bistro|chipper|fast food/,
  medical: /medical|dental|clinic|consult|surgery|doctor|\bgp\b|health|physio/,
};

/** The change of use's destination: the words after "to" in "from X to Y" (else all of it). */
function destination(d: string): string {
  const m = /\bfrom\b.*?\bto\b(.*)$/.exec(d);
  return m ? m[1]! : d;
}

/** The kinds of build a description states (keys of `BUILD_VERTICALS`), for a lead with work to sell. */
function buildsOf(useClass: string, d: string): string[] {
  const out: string[] = [];
  const text = d.replace(BUILD.demolished, ' ').replace(BUILD.notBuilding, ' ');
  const two = BUILD.twoStorey.test(text);
  const three = BUILD.threePlus.test(text);
  if (useClass === 'change_of_use') {
    const to = destination(d);
    out.push(
      BUILD.food.test(to)
        ? 'change of use to food'
        : BUILD.medical.test(to)
          ? 'change of use to medical'
          : 'change of use',
    );
    return out;
  }
  if (useClass === 'house' || useClass === 'residential_multi' || useClass === 'mixed_use') {
    out.push(
      useClass === 'mixed_use' || (useClass === 'residential_multi' && BUILD.apartments.test(d))
        ? 'apartment building'
        : `new ${useClass === 'house' ? 'house' : 'houses'}`,
    );
    if (two || three) out.push('two storeys');
    return out;
  }
  const extension = BUILD.extension.test(text) || BUILD.firstFloor.test(text);
  if (extension) {
    const firstOnly = BUILD.firstFloor.test(text) && !BUILD.ground.test(text);
    out.push(
      firstOnly
        ? 'first-floor extension'
        : two || three || BUILD.firstFloor.test(text)
          ? 'two-storey extension'
          : 'extension',
    );
  }
  if (BUILD.attic.test(text)) out.push('attic or garage conversion');
  if (!extension && BUILD.garage.test(text)) out.push('garage or shed');
  if (!extension && BUILD.newBuilding.test(text)) {
    out.push(`new ${useClass} building`);
    if (three) out.push('building of three storeys or more');
    else if (two) out.push('two storeys');
  }
  return out;
}

/** The verticals a build implies: the policy's sets, a new building's use-class defaults, scaffolding for two storeys. */
function impliedBy(build: string, useClass: string): readonly string[] {
  if (build in BUILD_VERTICALS) return BUILD_VERTICALS[build as keyof typeof BUILD_VERTICALS];
  if (build === 'two storeys') return ['scaffolding'];
  return USE_CLASS_VERTICALS[useClass] ?? [];
}

/** At most three words of a match: longer ones (a pattern with a gap) keep their first and last word only. */
function evidenceWords(match: string): string {
  const w = match.trim().split(/\s+/);
  return w.length <= 3 ? w.join(' ') : `${w[0]} … ${w[w.length - 1]}`;
}

/**
 * True when the works include demolishing a building or structure ("demolition of existing
 * garage", "knock down", "removal of existing shed"). "No demolition" does not count, nor
 * taking down a wall, railings, pillars or gates.
 */
export function detectDemolition(description: string): boolean {
  return DEMOLITION.test(withoutPerson(description));
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
  works_kind: WorksKind;
  /** The published verticals, sorted: explicit ∪ implied; none when there is no work to sell. */
  verticals: string[];
  /** The published verticals the description itself names (`explicit_vertical=` filters on these). */
  explicit_verticals: string[];
  /**
   * Why each published vertical is there, one entry per vertical in `verticals` order:
   * `roofing: dormer, rooflight` (the trade words that matched) or `groundworks: implied by extension`.
   */
  vertical_evidence: string[];
  demolition: boolean;
}

const LAND_USE_DEMOLITION = /demol/i;

/**
 * The whole classification of one planning application: the one function the refresh
 * (normalise/leads.ts) and `leads classify` call. The applicant's own words ("I, John Smith,
 * intend to apply for") are cut first, so evidence only ever carries trade words.
 *
 * @example classifyApplication({ description: 'Single storey extension to rear with 2 no. rooflights' }).verticals
 *   // ['electrical', 'groundworks', 'insulation', 'roofing', 'windows_doors']
 */
export function classifyApplication(i: ClassifyInput): Classification {
  const lower = withoutPerson(i.description);
  const stripped = stripPrefixes(lower);
  const row = {
    description: i.description,
    land_use_code: i.land_use_code ?? null,
    num_units: i.num_units ?? null,
    one_off_house: i.one_off_house ?? false,
    floor_area_m2: i.floor_area_m2 ?? null,
  };
  const useClass = useClassOf(row, lower, stripped);
  const worksKind = classifyWorksKind(i);
  const demolition =
    DEMOLITION.test(lower) || (row.land_use_code !== null && LAND_USE_DEMOLITION.test(row.land_use_code));
  if (NO_WORK_KINDS.has(worksKind)) {
    return {
      use_class: useClass,
      works_kind: worksKind,
      verticals: [],
      explicit_verticals: [],
      vertical_evidence: [],
      demolition,
    };
  }
  const words = new Map<string, string[]>();
  // What is demolished names no trade but demolition's ("demolish lean-to kitchen & construct …").
  const built = stripped.replace(DEMOLISHED_GLOBAL, ' ');
  const hit = scanVerticals(built);
  hit[DEMOLITION_INDEX] = DEMOLITION.test(stripped);
  for (let k = 0; k < VERTICALS.length; k++) {
    if (!hit[k]) continue;
    const re = VERTICAL_GLOBAL[k]!;
    const found = new Set<string>();
    for (const m of (k === DEMOLITION_INDEX ? stripped : built).matchAll(re)) found.add(evidenceWords(m[0]));
    words.set(VERTICALS[k]!.code, [...found]);
  }
  if (demolition && !words.has('demolition')) words.set('demolition', ['land use code']);
  const implied = new Map<string, string>();
  const builds = buildsOf(useClass, stripped.replace(DEMOLITION_CLAUSE, ''));
  for (const b of builds) for (const v of impliedBy(b, useClass)) if (!implied.has(v)) implied.set(v, b);
  if (WHOLE_PROJECT_CLASSES.has(useClass))
    for (const v of USE_CLASS_VERTICALS[useClass]!) if (!implied.has(v)) implied.set(v, `use class ${useClass}`);
  const verticals = [...new Set([...words.keys(), ...implied.keys()])].sort(
    (a, b) => VERTICAL_ORDER.get(a)! - VERTICAL_ORDER.get(b)!,
  );
  return {
    use_class: useClass,
    works_kind: worksKind,
    verticals,
    explicit_verticals: verticals.filter((v) => words.has(v)),
    vertical_evidence: verticals.map((v) =>
      words.has(v) ? `${v}: ${words.get(v)!.join(', ')}` : `${v}: implied by ${implied.get(v)}`,
    ),
    demolition,
  };
}

// ---------------------------------------------------------------------------------------------
// Value and scale

// Estimated value: pipeline/normalise/value.ts (`estimateValue`), over the rate tables above.

function reaches(
  t: { units: number; floorM2: number; value: number },
  units: number,
  floor: number,
  value: number,
): boolean {
  return units >= t.units || floor >= t.floorM2 || value >= t.value;
}

/**
 * Project scale: the highest level any one of units, floor area or estimated value reaches
 * (`SCALE_THRESHOLDS`, inclusive); a site of `LARGE_SITE_HA` hectares or more is at least large.
 */
export function classifyScale(i: {
  units: number | null;
  floorAreaM2: number | null;
  siteAreaHa: number | null;
  estValue: number;
}): Scale {
  const units = i.units ?? 0;
  const floor = i.floorAreaM2 ?? 0;
  if (reaches(SCALE_THRESHOLDS.major, units, floor, i.estValue)) return 'major';
  if (reaches(SCALE_THRESHOLDS.large, units, floor, i.estValue) || (i.siteAreaHa ?? 0) >= LARGE_SITE_HA) return 'large';
  if (reaches(SCALE_THRESHOLDS.medium, units, floor, i.estValue)) return 'medium';
  return 'minor';
}
