/**
 * The lead lifecycle's vocabulary, declared once for both sides: every `lead_readiness` stage in
 * lifecycle order and the coarse `status` group of each. The pipeline derives a lead's stage
 * (pipeline/normalise/readiness.ts); the API's `status` filter accepts a group or a stage
 * (api/query/lead-filters.ts). The lead schema's enums must list the same values (a test checks).
 */

/** Every readiness value, in lifecycle order. */
export const READINESS_VALUES = [
  'application',
  'further_information',
  'appealed',
  'granted',
  'commencing',
  'under_construction',
  'completed',
  'refused',
  'withdrawn',
  'expired',
] as const;

export type Readiness = (typeof READINESS_VALUES)[number];

export type LeadStatus = 'planning' | 'approved' | 'active' | 'closed';

/** The status group of each readiness value. */
export const STATUS_OF: Readonly<Record<Readiness, LeadStatus>> = {
  application: 'planning',
  further_information: 'planning',
  appealed: 'planning',
  granted: 'approved',
  commencing: 'active',
  under_construction: 'active',
  completed: 'closed',
  refused: 'closed',
  withdrawn: 'closed',
  expired: 'closed',
};
