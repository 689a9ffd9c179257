/**
 * A minimal browser for HTTP tests of the account area: keeps cookies (as a browser would from
 * `Set-Cookie`, ignoring `Secure` on http://127.0.0.1 as browsers do for loopback), sends the
 * same-origin headers a browser sends, and reads the page's CSRF token.
 *
 * @example
 *   const b = new AppAgent(api.baseUrl);
 *   const page = await b.get('/app/sign-in');
 *   await b.post('/app/sign-in', { form: { account: 'acme', password: '…', _csrf: csrfOf(page.text) } });
 */
export interface AgentResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** The CSRF token of a page (its `<meta name="csrf-token">`). */
export function csrfOf(html: string): string {
  const m = /<meta name="csrf-token" content="([^"]+)">/.exec(html);
  if (!m) throw new Error('no csrf-token meta in the page');
  return m[1]!;
}

export class AppAgent {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie header received, as sent (to check the flags). */
  readonly setCookies: string[] = [];

  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  private remember(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      this.setCookies.push(c);
      const [pair, ...attrs] = c.split(';').map((p) => p.trim());
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (attrs.some((a) => /^max-age=0$/i.test(a)) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(
    path: string,
    o: {
      method?: string;
      form?: Record<string, string>;
      json?: unknown;
      headers?: Record<string, string>;
      origin?: string | null;
      site?: string | null;
    } = {},
  ): Promise<AgentResponse> {
    const method = o.method ?? (o.form || o.json !== undefined ? 'POST' : 'GET');
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers['Cookie'] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (method !== 'GET' && method !== 'HEAD') {
      if (o.origin !== null) headers['Origin'] = o.origin ?? this.base;
      if (o.site !== null) headers['Sec-Fetch-Site'] = o.site ?? 'same-origin';
    }
    let body: string | undefined;
    if (o.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(o.form).toString();
    } else if (o.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Accept'] = 'application/json';
      body = JSON.stringify(o.json);
    }
    const res = await fetch(this.base + path, {
      method,
      headers: { ...headers, ...o.headers },
      redirect: 'manual',
      ...(body !== undefined ? { body } : {}),
    });
    this.remember(res);
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    return {
      status: res.status,
      headers: res.headers,
      text,
      body: /json/.test(type) && text ? JSON.parse(text) : null,
    };
  }

  get(path: string): Promise<AgentResponse> {
    return this.request(path);
  }

  post(path: string, o: Parameters<AppAgent['request']>[1] = {}): Promise<AgentResponse> {
    return this.request(path, { method: 'POST', ...o });
  }

  /** Open the invitation page, then set a password through it (as the page's script does). */
  async acceptWithPassword(url: string, password: string): Promise<AgentResponse> {
    const token = url.split('#')[1]!;
    const page = await this.get('/app/invite');
    return this.post('/app/invite/password', {
      json: { token, password },
      headers: { 'X-CSRF-Token': csrfOf(page.text) },
    });
  }

  /** Sign in with a password through the sign-in form. */
  async signIn(account: string, password: string, next = '/app'): Promise<AgentResponse> {
    const page = await this.get('/app/sign-in');
    return this.post('/app/sign-in', { form: { account, password, next, _csrf: csrfOf(page.text) } });
  }
}
