/**
 * Key scopes and what each may do (spec 2.2). The scope on the key, not the account's plan,
 * decides access; every scope gets the same endpoints and response shapes.
 */
export const SCOPES = ['commonwealth', 'ent_api', 'ent_feed', 'custom'] as const;
export type Scope = (typeof SCOPES)[number];

export const PLANS = ['basic', 'pro', 'premium'] as const;
export type Plan = (typeof PLANS)[number];

export interface Capabilities {
  /** Named applicant organisation, firmographics, company 360 sections. */
  enriched: boolean;
  webhooks: boolean;
  geojsonFeeds: boolean;
  redistribution: boolean;
  /** Keyed reads and export rows per day; null = uncapped. */
  dailyRows: number | null;
  requestsPerHour: number;
}

export const CAPABILITIES: Record<Scope, Capabilities> = {
  commonwealth: {
    enriched: false,
    webhooks: false,
    geojsonFeeds: false,
    redistribution: false,
    dailyRows: 1_000,
    requestsPerHour: 600,
  },
  ent_api: {
    enriched: true,
    webhooks: true,
    geojsonFeeds: false,
    redistribution: false,
    dailyRows: 5_000,
    requestsPerHour: 5_000,
  },
  ent_feed: {
    enriched: true,
    webhooks: true,
    geojsonFeeds: true,
    redistribution: true,
    dailyRows: null,
    requestsPerHour: 20_000,
  },
  custom: {
    enriched: true,
    webhooks: true,
    geojsonFeeds: true,
    redistribution: true,
    dailyRows: null,
    requestsPerHour: 120_000,
  },
};

/** The key prefix reveals the scope (like Stripe's sk_live_): `lk_cw_…`, `lk_ea_…`, `lk_ef_…`, `lk_cu_…`. */
export const KEY_PREFIX: Record<Scope, string> = {
  commonwealth: 'lk_cw_',
  ent_api: 'lk_ea_',
  ent_feed: 'lk_ef_',
  custom: 'lk_cu_',
};

/** The lowest scopes that have a capability, for 403 messages ("needs ent_api or above"). */
export function scopesWith(cap: keyof Pick<Capabilities, 'enriched' | 'webhooks' | 'geojsonFeeds'>): Scope[] {
  return SCOPES.filter((s) => CAPABILITIES[s][cap]);
}

/** The licence of the public sector data the attribution names (CC BY 4.0), linked from commonwealth responses. */
export const LICENCE_URL = 'https://creativecommons.org/licenses/by/4.0/';

/** Attribution commonwealth responses must carry (spec 1.5). */
export const ATTRIBUTION =
  'Contains Irish public sector data (planning authorities, BCMS, Property Services Regulatory Authority, CRO) licensed under CC BY 4.0. ' +
  'Commonwealth use requires this attribution; redistribution is not permitted.';
