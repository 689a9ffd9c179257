#!/usr/bin/env python3
"""Keep a local SQLite mirror of the leads exact: a first full export, then the event feed.

Python standard library only. Run it once a week (after the Monday refresh), e.g. from cron:

    LEADS_API_URL=https://leads.example.ie LEADS_API_KEY=lk_ea_... LEADS_DB=leads.sqlite \
    LEADS_FILTER='county=Cork' python3 sync.py

- First run (an empty database): every lead of the export `/v1/export/applications` (cursor pages),
  and the release it was read from.
- Every later run: `/v1/events` after the saved cursor (the first time: `after_release=` that
  release), applied in id order - `lead.created` inserts the lead, `lead.updated` and
  `lead.stage_changed` set each changed field to its `after`, `lead.removed` deletes it - and the
  new cursor saved in the same transaction, so a run cut short repeats nothing and loses nothing.

`LEADS_FILTER` (optional) takes the filters of /v1/leads; filter on what does not change (county,
authority, vertical, use_class): a lead that leaves a filter gets no further event for it.
Table `leads` holds each lead as its JSON record (`data`), plus the columns most queries want.
See docs/sync.md.
"""
import json
import os
import sqlite3
import sys
import urllib.parse
import urllib.request

BASE = os.environ.get("LEADS_API_URL", "http://localhost:3000").rstrip("/")
KEY = os.environ["LEADS_API_KEY"]
DB = os.environ.get("LEADS_DB", "leads.sqlite")
FILTER = os.environ.get("LEADS_FILTER", "")


def get(path, params):
    query = "&".join(p for p in [urllib.parse.urlencode(params), FILTER] if p)
    req = urllib.request.Request(f"{BASE}/v1{path}?{query}", headers={"Authorization": f"Bearer {KEY}"})
    try:
        with urllib.request.urlopen(req, timeout=120) as res:
            return json.load(res)
    except urllib.error.HTTPError as e:
        problem = json.load(e)
        sys.exit(f"{e.code} {problem.get('code')}: {problem.get('detail')}")


def open_db():
    db = sqlite3.connect(DB)
    db.execute("CREATE TABLE IF NOT EXISTS leads (id INTEGER PRIMARY KEY, county TEXT, lead_readiness TEXT, last_changed TEXT, data TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS sync_state (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    return db


def state(db, name):
    row = db.execute("SELECT value FROM sync_state WHERE name = ?", (name,)).fetchone()
    return row[0] if row else None


def put(db, lead):
    db.execute(
        "INSERT OR REPLACE INTO leads (id, county, lead_readiness, last_changed, data) VALUES (?, ?, ?, ?, ?)",
        (lead["id"], lead.get("county"), lead.get("lead_readiness"), lead.get("last_changed"), json.dumps(lead, sort_keys=True)),
    )


def full_export(db):
    params = {"limit": 1000}
    release = None
    rows = 0
    while True:
        page = get("/export/applications", params)
        release = release or page["_meta"]["release"]
        with db:
            for lead in page["results"]:
                put(db, lead)
        rows += len(page["results"])
        if not page["next_cursor"]:
            break
        params = {"limit": 1000, "cursor": page["next_cursor"]}
    with db:
        db.execute("INSERT OR REPLACE INTO sync_state VALUES ('release', ?)", (release,))
    print(f"full export: {rows} leads of release {release}")


def apply_events(db):
    cursor = state(db, "cursor")
    params = {"page_size": 1000, **({"after": cursor} if cursor else {"after_release": state(db, "release")})}
    counts = {}
    while True:
        page = get("/events", params)
        with db:  # the events and the cursor that follows them, in one transaction
            for e in page["results"]:
                counts[e["type"]] = counts.get(e["type"], 0) + 1
                if e["type"] == "lead.removed":
                    db.execute("DELETE FROM leads WHERE id = ?", (e["lead_id"],))
                    continue
                row = None if e["type"] == "lead.created" else db.execute("SELECT data FROM leads WHERE id = ?", (e["lead_id"],)).fetchone()
                if e["type"] != "lead.created" and row is None:
                    continue  # a change of a lead this mirror does not hold
                lead = {} if row is None else json.loads(row[0])
                for field, change in e["changes"].items():
                    lead[field] = change["after"]
                put(db, lead)
            db.execute("INSERT OR REPLACE INTO sync_state VALUES ('cursor', ?)", (page["next_cursor"],))
        if not page["has_more"]:
            break
        params = {"page_size": 1000, "after": page["next_cursor"]}
    print("events applied: " + json.dumps(counts, sort_keys=True))


def main():
    db = open_db()
    if state(db, "release") is None:
        full_export(db)
    else:
        apply_events(db)
    db.close()


if __name__ == "__main__":
    main()
