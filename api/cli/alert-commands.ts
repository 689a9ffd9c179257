/**
 * `leads alerts …`: sending the saved searches' e-mail alerts (api/alerts/sender.ts), meant to run
 * from a timer (docs/operations.md "Alert e-mails"). Reads DATA_DIR / DATABASE_URL / SMTP_URL /
 * SMTP_FROM / PUBLIC_BASE_URL like the server, and the release `DATA_DIR/current` points at.
 */
import { parseArgs } from 'node:util';
import { loadApiConfig } from '../config.ts';
import { sendAlerts } from '../alerts/sender.ts';
import type { StateStore } from '../state/store-interface.ts';
import { dataDirLeadReader } from '../webhooks/lead-reader.ts';
import { UsageError } from './usage-errors.ts';

export const ALERTS_USAGE = `Alert e-mails of saved searches (docs/app.md "Saved searches and alerts"):
  alerts send [--now ISO-8601] [--json]
                         e-mail every daily / weekly alert not yet sent for its period (the UTC day,
                         the ISO week) with the leads new — or changed stage — since its last e-mail,
                         through SMTP_URL; an account whose keys grant nothing now (revoked, expired,
                         plan downgraded) gets none. Running it again in a period sends nothing twice
`;

type Io = { out: (s: string) => void; err: (s: string) => void };
type AlertCommand = (args: string[], store: () => StateStore, io: Io) => Promise<number>;

export const alertCommands: Record<string, AlertCommand> = {
  async send(args, store, io) {
    const { values } = parseArgs({
      args,
      options: { now: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const now = values.now === undefined ? new Date() : new Date(values.now);
    if (Number.isNaN(now.getTime())) throw new UsageError(`--now must be an ISO-8601 instant, got ${values.now}`);
    const config = loadApiConfig(process.env);
    const leads = dataDirLeadReader(config.dataDir);
    try {
      const summary = await sendAlerts({ store: store(), leads, config, now, log: io.err });
      if (values.json) io.out(JSON.stringify(summary));
      else
        io.out(
          `alerts: ${summary.sent} sent, ${summary.nothing_new} with nothing new, ${summary.already} already done this period, ` +
            `${summary.no_access} held (no key grants access), ${summary.failed} failed — of ${summary.searches} searches with an alert` +
            (summary.release ? ` (release ${summary.release})` : ''),
        );
      return summary.failed > 0 ? 1 : 0;
    } finally {
      await leads.close();
    }
  },
};
