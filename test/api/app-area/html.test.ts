import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { escapeHtml, html, trusted } from '../../../api/app-area/html.ts';

test('interpolated text is escaped, nested html is not escaped twice', () => {
  const label = `<script>alert(1)</script> & "x" 'y'`;
  const row = html`<td>${label}</td>`;
  assert.is(row.__html, '<td>&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot; &#39;y&#39;</td>');
  assert.is(html`<tr>${row}</tr>`.__html, `<tr>${row.__html}</tr>`);
  assert.is(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.__html, '<ul><li>a&lt;</li><li>b</li></ul>');
  assert.is(html`${null}${undefined}${false}${0}`.__html, '0');
  assert.is(html`${trusted('<b>')}`.__html, '<b>');
  assert.is(escapeHtml('a&b'), 'a&amp;b');
});

test.run();
