/**
 * `validate`: every row about to be published is checked against `schemas/`, and the privacy
 * gate checks every published name. After it the refresh stops if the privacy gate failed
 * (`blocked`, whatever `--force` says; its messages name record ids, never a name), or throws if
 * any row is invalid (nothing is published).
 */
import { checkPublishedNames } from '../release/name-gate.ts';
import { validateAll, type RecordKind } from '../validate.ts';
import { need, noteInvalid } from './context.ts';
import type { Stage } from './runner.ts';

export const validateStage: Stage = {
  name: 'validate',
  async run(ctx) {
    const { companies, filings } = need(ctx, 'companies');
    const tracked = need(ctx, 'tracked');
    const published = (ctx.made.published = {
      companies: companies.rows.map(({ line: _l, name_key: _k, ...c }) => c),
      filings: filings.rows.map(({ line: _l, ...f }) => f),
      changes: [...tracked.leads.changes, ...tracked.infra.changes],
      registry: [...tracked.leads.entries, ...tracked.infra.entries],
    });
    const validators = need(ctx, 'validators');
    const check = (kind: RecordKind, rows: Iterable<unknown>): number => {
      const r = validateAll(validators, kind, rows, 5);
      noteInvalid(ctx, kind, r);
      return r.checked;
    };
    const checked =
      check('lead', tracked.leads.records) +
      check('infrastructure-project', tracked.infra.records) +
      check('company', published.companies) +
      check('filing', published.filings) +
      check('supplier', tracked.suppliers) +
      check('lead-neighbour', tracked.neighbours) +
      check('change', published.changes) +
      check('reject', ctx.rejects);
    ctx.made.names = checkPublishedNames(
      { leads: tracked.leads.records, infrastructure: tracked.infra.records },
      need(ctx, 'normalised').index,
    );
    return checked;
  },
  end(ctx) {
    const names = need(ctx, 'names');
    if (!names.passed) {
      return {
        status: 'blocked',
        releaseId: null,
        sources: ctx.sources,
        gates: { passed: false, forced: false, messages: names.messages },
        message: `privacy gate failed — release refused (current release unchanged; --force does not override it):\n  ${names.messages.join('\n  ')}`,
      };
    }
    if (Object.keys(ctx.invalid).length > 0) {
      const detail = Object.entries(ctx.invalid)
        .map(([k, v]) => `${k}: ${v.invalid} invalid (${v.samples.join('; ')})`)
        .join('\n  ');
      throw new Error(`published rows failed schema validation — nothing was published:\n  ${detail}`);
    }
    return null;
  },
};
