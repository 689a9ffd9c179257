/**
 * `validate`: the rows not already checked as they were streamed (companies, filings, suppliers,
 * infrastructure projects, rejects) are checked against `schemas/`, the streamed tables' checks
 * are noted, and the privacy gate's result is taken (it saw every published name as it was
 * written). After it the refresh stops if the privacy gate failed (`blocked`, whatever `--force`
 * says; its messages name record ids, never a name), or throws if any row is invalid (nothing is
 * published).
 */
import { validateAll, type RecordKind, type RowCheck } from '../validate.ts';
import { need, noteInvalid } from './context.ts';
import { orderSources } from './link.ts';
import type { Stage } from './runner.ts';

export const validateStage: Stage = {
  name: 'validate',
  async run(ctx) {
    orderSources(ctx);
    const { companies, filings } = need(ctx, 'companies');
    const tracked = need(ctx, 'tracked');
    const published = (ctx.made.published = {
      companies: companies.rows.map(({ line: _l, name_key: _k, ...c }) => c),
      filings: filings.rows.map(({ line: _l, ...f }) => f),
    });
    const validators = need(ctx, 'validators');
    const check = (kind: RecordKind, rows: Iterable<unknown>): number => {
      const r = validateAll(validators, kind, rows, 5);
      noteInvalid(ctx, kind, r);
      return r.checked;
    };
    // the streamed tables were checked as they were written: their results are noted in the same order
    const streamed = (s: { kind: RecordKind | null; check: RowCheck | null }): number => {
      noteInvalid(ctx, s.kind!, s.check!);
      return s.check!.checked;
    };
    const sinks = need(ctx, 'sinks');
    const checked =
      streamed(sinks.leads) +
      check('infrastructure-project', tracked.infra.records) +
      check('company', published.companies) +
      check('filing', published.filings) +
      check('supplier', tracked.suppliers) +
      streamed(sinks.lead_neighbours) +
      streamed(sinks.changes) +
      check('reject', ctx.rejects);
    ctx.made.names = need(ctx, 'nameGate').result();
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
