"""Python client of the Irish construction-leads API: the standard library only (Python 3.8+).

One file to copy next to your code. It pages every list to its end, retries a 429 or 503 after
its Retry-After (or the rate-limit window's reset), raises RFC 9457 problems as LeadsProblem with
their stable code, exposes the rate-limit and budget headers of every answer, streams exports to a
file, verifies webhook signatures (Standard Webhooks), and keeps an SQLite copy of a filter in
step (sync_to_sqlite: a full export, then the events feed once the server has one).

    from leads_client import LeadsClient
    client = LeadsClient(api_key, "https://api.example.ie/v1")
    for lead in client.paginate("/leads", {"county": ["Cork"], "page_size": 100}):
        print(lead["id"], lead["address"])

Command line (key in LEADS_API_KEY, base URL in LEADS_BASE_URL):
    python3 leads_client.py get /leads county=Cork page_size=5
    python3 leads_client.py export csv cork.csv county=Cork
    python3 leads_client.py sync leads.sqlite county=Cork
"""

import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import sqlite3
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["LeadsClient", "LeadsProblem", "Answer", "limits_of", "verify_webhook", "sync_to_sqlite"]
__version__ = "0.1.0"


class LeadsProblem(Exception):
    """An RFC 9457 problem from the API: status, code (rate_limited, invalid_parameter, ...), detail,
    the per-parameter errors of a 400, the request id, and retry_after (seconds) when given."""

    def __init__(self, problem, limits, retry_after=None):
        self.problem = problem
        self.status = problem.get("status")
        self.code = problem.get("code")
        self.detail = problem.get("detail") or problem.get("title")
        self.errors = problem.get("errors") or []
        self.request_id = problem.get("request_id")
        self.limits = limits
        self.retry_after = retry_after
        super().__init__("%s %s: %s" % (self.status, self.code, self.detail))


class Answer:
    """A decoded answer: data (the JSON body), limits (limits_of its headers), status, headers."""

    def __init__(self, data, limits, status, headers):
        self.data, self.limits, self.status, self.headers = data, limits, status, headers


def _num(v):
    return None if v in (None, "", "unlimited") else int(v)


def limits_of(headers):
    """The access headers of an answer as numbers: rate_limit {limit, remaining, reset} and budget
    {limit, remaining, reset, cost} (limit/remaining None where the scope is uncapped)."""
    h = {k.lower(): v for k, v in headers.items()}
    rl = _num(h.get("x-ratelimit-limit"))
    reset = _num(h.get("x-budget-reset"))
    return {
        "request_id": h.get("x-request-id"),
        "rate_limit": None if rl is None else {"limit": rl, "remaining": _num(h.get("x-ratelimit-remaining")), "reset": _num(h.get("x-ratelimit-reset"))},
        "budget": None if reset is None else {"limit": _num(h.get("x-budget-limit")), "remaining": _num(h.get("x-budget-remaining")), "reset": reset, "cost": _num(h.get("x-budget-cost"))},
    }


def _retry_delay(headers, now):
    """Seconds to wait before retrying: Retry-After, else the rate-limit reset, else None."""
    ra = headers.get("Retry-After")
    if ra is not None and ra.strip().isdigit():
        return int(ra.strip())
    reset = _num(headers.get("X-RateLimit-Reset"))
    return None if reset is None else max(0, reset - now)


def query_string(params):
    """A query string: lists joined with commas (OR within a filter), booleans true/false, None left out."""
    pairs = []
    for k, v in (params or {}).items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        pairs.append((k, str(v)))
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def _next_from_link(link):
    for part in (link or "").split(","):
        m = re.search(r'<([^>]+)>\s*;\s*rel="?next"?', part)
        if m:
            return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(m.group(1)).query, keep_blank_values=True))
    return None


class LeadsClient:
    """One API key against one server (base_url includes /v1).

    max_retries: retries of a 429 / 503 before its problem is raised; max_retry_wait: a longer wait
    than this (seconds; a spent daily budget waits until 00:00 UTC) is raised at once.
    """

    def __init__(self, api_key, base_url, max_retries=3, max_retry_wait=120, timeout=60, sleep=time.sleep):
        if not api_key:
            raise ValueError("api_key is required")
        self.api_key, self.base_url = api_key, base_url.rstrip("/")
        self.max_retries, self.max_retry_wait, self.timeout, self.sleep = max_retries, max_retry_wait, timeout, sleep
        self.last_limits = None

    def open(self, path, params=None):
        """GET base_url + path with retries; returns the open response (read it, then close it).
        Raises LeadsProblem for any answer that is not a 2xx."""
        url = self.base_url + path + query_string(params)
        for attempt in range(self.max_retries + 1):
            req = urllib.request.Request(url, headers={"Authorization": "Bearer " + self.api_key, "Accept": "application/json", "User-Agent": "leads-client-python/" + __version__})
            try:
                res = urllib.request.urlopen(req, timeout=self.timeout)
                self.last_limits = limits_of(res.headers)
                return res
            except urllib.error.HTTPError as e:
                limits = limits_of(e.headers)
                self.last_limits = limits
                wait = _retry_delay(e.headers, int(time.time())) if e.code in (429, 503) else None
                body = e.read()
                e.close()
                if wait is not None and wait <= self.max_retry_wait and attempt < self.max_retries:
                    self.sleep(wait)
                    continue
                try:
                    problem = json.loads(body)
                    if not isinstance(problem, dict) or "code" not in problem:
                        raise ValueError("not a problem")
                except ValueError:
                    problem = {"status": e.code, "code": "http_%d" % e.code, "title": e.reason, "detail": body[:500].decode("utf-8", "replace")}
                raise LeadsProblem(problem, limits, wait) from None

    def get(self, path, params=None):
        """GET a JSON answer: Answer(data, limits, status, headers). path may hold {name}s filled from
        params (get("/leads/{id}", {"id": 7}))."""
        params = dict(params or {})
        path = re.sub(r"\{([^}]+)\}", lambda m: urllib.parse.quote(str(params.pop(m.group(1))), safe=""), path)
        with self.open(path, params) as res:
            return Answer(json.loads(res.read()), limits_of(res.headers), res.status, res.headers)

    def quote(self, path, params=None):
        """What GET path would cost against the daily row budget (dry_run=1; charges nothing)."""
        return self.get(path, dict(params or {}, dry_run=1))

    def pages(self, path, params=None):
        """Every page (Answer) of a paged list until the server says there is no next page: the next
        page is the Link rel="next" query when sent, else next_cursor as cursor with the same query;
        a page with has_more false is the last."""
        q = dict(params or {})
        while True:
            page = self.get(path, q)
            yield page
            link = _next_from_link(page.headers.get("Link"))
            cursor = page.data.get("next_cursor") if isinstance(page.data, dict) else None
            if isinstance(page.data, dict) and page.data.get("has_more") is False:
                return  # the events feed keeps a next_cursor at its end, to resume from next time
            if link is not None:
                q = link
            elif cursor:
                q = {k: v for k, v in q.items() if k != "page"}
                q["cursor"] = cursor
            else:
                return

    def paginate(self, path, params=None):
        """Every item ("results" of each page) of a paged list, fetched page by page as you iterate."""
        for page in self.pages(path, params):
            for item in page.data["results"]:
                yield item

    def export_to_file(self, fmt, file, params=None):
        """Stream /export/applications.<fmt> (csv, jsonl or parquet: the whole filtered set) to file.
        Returns {"bytes", "filename", "limits"}."""
        if fmt not in ("csv", "jsonl", "parquet"):
            raise ValueError("format must be csv, jsonl or parquet")
        with self.open("/export/applications." + fmt, params) as res, open(file, "wb") as out:
            shutil.copyfileobj(res, out, 1 << 16)
            m = re.search(r'filename="?([^";]+)"?', res.headers.get("Content-Disposition") or "")
            return {"bytes": out.tell(), "filename": m.group(1) if m else None, "limits": limits_of(res.headers)}

    def has_operation(self, path):
        """Whether the server's OpenAPI document describes GET path (e.g. "/events")."""
        with self.open("/openapi.json") as res:
            return "get" in json.loads(res.read()).get("paths", {}).get(path, {})


def verify_webhook(secret, raw_body, headers, now=None, tolerance=300):
    """True when raw_body (the exact bytes received) carries a valid webhook-signature for secret
    (whsec_...) and webhook-timestamp is within tolerance seconds of now. headers: any mapping."""
    h = {k.lower(): v for k, v in dict(headers).items()}
    msg_id, ts = h.get("webhook-id", ""), h.get("webhook-timestamp", "")
    now = int(time.time()) if now is None else now
    if not msg_id or not ts.isdigit() or abs(now - int(ts)) > tolerance:
        return False
    key = base64.b64decode(secret[6:] if secret.startswith("whsec_") else secret)
    mac = hmac.new(key, ("%s.%s." % (msg_id, ts)).encode() + raw_body, hashlib.sha256).digest()
    expected = "v1," + base64.b64encode(mac).decode()
    return any(hmac.compare_digest(s, expected) for s in h.get("webhook-signature", "").split(" "))


_SCHEMA = """
CREATE TABLE IF NOT EXISTS leads (id INTEGER PRIMARY KEY, county TEXT, planning_authority TEXT,
  received_date TEXT, lead_readiness TEXT, last_changed TEXT, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sync_state (name TEXT PRIMARY KEY, value TEXT);
"""


def _upsert(db, lead):
    db.execute(
        "INSERT OR REPLACE INTO leads (id, county, planning_authority, received_date, lead_readiness, last_changed, record) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (lead["id"], lead.get("county"), lead.get("planning_authority"), lead.get("received_date"), lead.get("lead_readiness"), lead.get("last_changed"), json.dumps(lead)),
    )


def _apply_event(db, event):
    """One event of /v1/events on the table: lead.created inserts the lead (its changes' after
    values), lead.updated / lead.stage_changed set each changed field, lead.removed deletes it."""
    lead_id = event["lead_id"]
    if event["type"] == "lead.removed":
        db.execute("DELETE FROM leads WHERE id = ?", (lead_id,))
        return
    row = db.execute("SELECT record FROM leads WHERE id = ?", (lead_id,)).fetchone()
    if row is None and event["type"] != "lead.created":
        return  # a change of a lead this copy does not hold
    lead = json.loads(row[0]) if row else {"id": lead_id}
    for field, change in (event.get("changes") or {}).items():
        lead[field] = change["after"]
    _upsert(db, lead)


def sync_to_sqlite(client, db_path, params=None, page_size=1000):
    """Keep an SQLite copy of the leads of a filter (params: the /leads filters; filter on what
    does not change - county, authority, vertical, use_class - docs/sync.md).

    The first run takes a full export (/export/applications, cursor pages pinned to one release)
    into the table leads (id, a few columns to index, the whole record as JSON) and records the
    release. Later runs read the events feed (/v1/events: after the saved cursor, the first time
    after_release= that release) and apply each event, saving the feed's cursor in the same
    transaction as the events before it; on a server without the feed they take a fresh full
    export. Returns {"mode": "full"|"events", "leads": rows in the table, "release", "events"}.
    """
    db = sqlite3.connect(db_path)
    try:
        db.executescript(_SCHEMA)
        state = dict(db.execute("SELECT name, value FROM sync_state"))
        filters = query_string(params)
        if state.get("filters") == filters and state.get("release") and client.has_operation("/events"):
            mode, release, events = "events", state["release"], 0
            start = {"after": state["events_cursor"]} if state.get("events_cursor") else {"after_release": state["release"]}
            for page in client.pages("/events", dict(params or {}, page_size=page_size, **start)):
                with db:  # the events and the cursor that follows them, in one transaction
                    for event in page.data["results"]:
                        _apply_event(db, event)
                        events += 1
                    db.execute("INSERT OR REPLACE INTO sync_state VALUES ('events_cursor', ?)", (page.data["next_cursor"],))
        else:
            mode, release, events = "full", None, None
            with db:
                db.execute("DELETE FROM leads")
                db.execute("DELETE FROM sync_state")
                for page in client.pages("/export/applications", dict(params or {}, limit=page_size)):
                    release = release or page.data["_meta"]["release"]
                    for lead in page.data["results"]:
                        _upsert(db, lead)
                db.executemany("INSERT OR REPLACE INTO sync_state VALUES (?, ?)", [("filters", filters), ("release", release)])
        return {"mode": mode, "leads": db.execute("SELECT count(*) FROM leads").fetchone()[0], "release": release, "events": events}
    finally:
        db.close()


def _main(argv):
    client = LeadsClient(os.environ["LEADS_API_KEY"], os.environ.get("LEADS_BASE_URL", "http://localhost:3000/v1"))
    cmd, rest = argv[0], argv[1:]
    params = lambda items: dict(i.split("=", 1) for i in items)  # noqa: E731
    if cmd == "get":
        print(json.dumps(client.get(rest[0], params(rest[1:])).data, indent=2))
    elif cmd == "export":
        print(json.dumps(client.export_to_file(rest[0], rest[1], params(rest[2:]))))
    elif cmd == "sync":
        print(json.dumps(sync_to_sqlite(client, rest[0], params(rest[1:]))))
    else:
        raise SystemExit("usage: leads_client.py get PATH [k=v ...] | export FORMAT FILE [k=v ...] | sync DB [k=v ...]")


if __name__ == "__main__":
    try:
        _main(sys.argv[1:])
    except LeadsProblem as e:
        print(e, file=sys.stderr)
        sys.exit(1)
