/**
 * The `html` tagged template of the account area: every interpolated value is escaped unless it
 * is already `SafeHtml` (the result of another `html` call) or an array of them. Pages build all
 * their markup with it, so a key label of `<script>alert(1)</script>` renders as text.
 *
 * @example html`<td>${key.name}</td>` // { __html: '<td>&lt;script&gt;…</td>' }
 */
import type { SafeHtml } from './contract.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escape text for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const isSafe = (v: unknown): v is SafeHtml =>
  typeof v === 'object' && v !== null && typeof (v as SafeHtml).__html === 'string';

function piece(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map(piece).join('');
  if (isSafe(v)) return v.__html;
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]!;
  return { __html: out };
}

/** Markup the caller vouches for (a constant, or the output of a trusted renderer). Never for user input. */
export function trusted(markup: string): SafeHtml {
  return { __html: markup };
}
