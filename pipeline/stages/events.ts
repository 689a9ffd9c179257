/**
 * `events`: the release's event log (`events.parquet`, pipeline/release/events.ts) — this
 * release's per-lead changes against the previous release, with before / after values, added to
 * the previous log and trimmed to its retention. This release's events are validated against
 * `schemas/event.schema.json` like every other published row (an invalid one stops the refresh).
 */
import { writeEvents } from '../release/events.ts';
import { validateAll } from '../validate.ts';
import { need, noteInvalid } from './context.ts';
import type { Stage } from './runner.ts';

export const eventsStage: Stage = {
  name: 'events',
  async run(ctx) {
    const build = need(ctx, 'build');
    const written = await writeEvents(build.db(), build.dir, ctx.previous?.dir ?? null, {
      id: build.releaseId,
      asOf: need(ctx, 'asOf'),
    });
    ctx.counts['events'] = written.rows;
    ctx.made.events = written.counts;
    noteInvalid(ctx, 'event', validateAll(need(ctx, 'validators'), 'event', written.events, 5));
    return written.events.length;
  },
  end(ctx) {
    const bad = ctx.invalid['event'];
    if (bad)
      throw new Error(
        `events failed schema validation — nothing was published: ${bad.invalid} invalid (${bad.samples.join('; ')})`,
      );
    return null;
  },
};
