"""Generate the telehealth database: `python -m ledger_tui.domains.telehealth.generate [--seed N] [--out PATH]`.

Seeded and deterministic: the same seed writes the same bytes. The catalogues in `catalogue.py`
(conditions, medications, interactions, suppliers, device models) are written for this project;
the generator draws patients, their conditions, prescriptions, visits, records and telemetry from
them so that the data hangs together (a diabetic patient sees an endocrinologist or their primary care provider
for "diabetes follow-up", takes metformin from a supplier that stocks it, and uploads glucose
readings). Upcoming visits take slots out of the providers' published availability.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

from ledger_tui.domains.telehealth.catalogue import (
    CONDITIONS, CONDITION_WEIGHTS, GENERAL_VISITS, TREATS, DOSAGES, MEDICATIONS, INTERACTIONS, SUPPLIERS,
    DEVICE_MODELS, FIRST_NAMES, LAST_NAMES, PROVIDER_NAMES, PROVIDER_SPECIALTIES, DAY_PATTERNS, CITIES,
    STREETS, PAYERS, ALLERGIES, EMAIL_DOMAINS,
)
from ledger_tui.domains.telehealth.slots import NOW, fmt, parse, slots_for

SEED = 20250310
HORIZON_START = dt.date(2025, 3, 10)
HORIZON_DAYS = 12  # through Friday 2025-03-21
HISTORY_START = dt.date(2024, 9, 2)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")


def _slots_of_day(day: dt.date, blocks: list[str]) -> list[str]:
    out = []
    for block in blocks:
        a, b = block.split("-")
        t = dt.datetime.combine(day, dt.time.fromisoformat(a))
        end = dt.datetime.combine(day, dt.time.fromisoformat(b))
        while t < end:
            out.append(fmt(t))
            t += dt.timedelta(minutes=30)
    return out


def _schedule_slots(schedule: dict[str, list[str]], first: dt.date, days: int) -> list[str]:
    out = []
    for i in range(days):
        day = first + dt.timedelta(days=i)
        if day.weekday() < 5 and WEEKDAYS[day.weekday()] in schedule:
            out.extend(_slots_of_day(day, schedule[WEEKDAYS[day.weekday()]]))
    return out


def _fits(reason: str, specialty: str) -> bool:
    return any(term.lower() in reason.lower() for term in TREATS[specialty])


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.providers: dict[str, dict[str, Any]] = {}
        self.patients: dict[str, dict[str, Any]] = {}
        self.conditions: dict[str, list[str]] = {}
        self.suppliers: dict[str, dict[str, Any]] = {}
        self.prescriptions: dict[str, dict[str, Any]] = {}
        self.appointments: list[dict[str, Any]] = []
        self.records: dict[str, dict[str, Any]] = {}
        self.devices: dict[str, dict[str, Any]] = {}
        self.uploads: dict[str, dict[str, Any]] = {}
        self.busy: dict[str, set[str]] = {}  # provider -> taken slot starts (history and horizon)

    # ----------------------------------------------------------------- catalogue records
    def make_providers(self) -> None:
        rng = self.rng
        for i, ((first, last), specialty) in enumerate(zip(PROVIDER_NAMES, PROVIDER_SPECIALTIES)):
            pid = f"DR{1001 + i}"
            title = "NP" if specialty in ("primary_care", "psychiatry") and rng.random() < 0.3 else rng.choice(["MD", "MD", "DO"])
            days = sorted(rng.sample(range(5), rng.choice([3, 3, 4, 4, 5])))
            schedule = {WEEKDAYS[d]: rng.choice(DAY_PATTERNS) for d in days}
            languages = ["English"] + ([rng.choice(["Spanish", "Mandarin", "Vietnamese", "Hindi", "French", "Arabic"])]
                                       if rng.random() < 0.35 else [])
            self.providers[pid] = {
                "provider_id": pid, "first_name": first, "last_name": last, "title": title,
                "specialty": specialty, "treats": list(TREATS[specialty]), "languages": languages,
                "weekly_schedule": schedule,
                "available_slots": _schedule_slots(schedule, HORIZON_START, HORIZON_DAYS),
            }
            self.busy[pid] = set()

    def make_suppliers(self) -> None:
        rng = self.rng
        for i, (name, kind, days, share) in enumerate(SUPPLIERS):
            sid = f"SUP{i + 1:02d}"
            stocks = [m for m in MEDICATIONS if rng.random() < share]
            self.suppliers[sid] = {
                "supplier_id": sid, "name": name, "kind": kind,
                "phone": f"555-01{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
                "delivery_days": days, "stocks": stocks,
            }
        for med in MEDICATIONS:  # every medication has at least two suppliers
            holders = [s for s in self.suppliers.values() if med in s["stocks"]]
            for s in rng.sample(list(self.suppliers.values()), 8):
                if len(holders) >= 2:
                    break
                if s not in holders:
                    s["stocks"].append(med)
                    holders.append(s)
        for s in self.suppliers.values():
            s["stocks"] = [m for m in MEDICATIONS if m in s["stocks"]]

    # ----------------------------------------------------------------- patients
    def make_patients(self, count: int) -> None:
        rng = self.rng
        primary = [p for p in self.providers.values() if p["specialty"] == "primary_care"]
        local_parts: set[str] = set()
        names = list(CONDITIONS)
        weights = [CONDITION_WEIGHTS[c] for c in names]
        for i in range(count):
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            if i == 60:  # one more pair sharing a name; only the date of birth tells them apart
                namesake = next(iter(self.patients.values()))
                first, last = namesake["first_name"], namesake["last_name"]
            pid = f"{first}_{last}_{rng.randint(1000, 9999)}".lower().replace("-", "")
            born = dt.date(1942, 1, 1) + dt.timedelta(days=rng.randint(0, 365 * 62))
            local = f"{first}.{last}".lower()
            while local in local_parts:
                local = f"{first}.{last}{rng.randint(2, 99)}".lower()
            local_parts.add(local)
            email = f"{local}@{rng.choice(EMAIL_DOMAINS)}"
            city, state, zip_prefix = rng.choice(CITIES)
            age = (HORIZON_START - born).days // 365
            n_conditions = rng.choices([0, 1, 2, 3], [2, 4, 3, 2] if age > 50 else [4, 4, 2, 1])[0]
            conditions: list[str] = []
            while len(conditions) < n_conditions:
                c = rng.choices(names, weights)[0]
                if c not in conditions:
                    conditions.append(c)
            self.conditions[pid] = conditions
            self.patients[pid] = {
                "patient_id": pid, "first_name": first, "last_name": last, "date_of_birth": born.isoformat(),
                "email": email, "phone": f"555-{rng.randint(200, 899)}-{rng.randint(1000, 9999)}",
                "address": {"street": f"{rng.randint(10, 9899)} {rng.choice(STREETS)}", "city": city,
                            "state": state, "zip": f"{zip_prefix}{rng.randint(100, 999)}"},
                "primary_provider_id": rng.choice(primary)["provider_id"],
                "allergies": sorted(rng.sample(ALLERGIES, rng.choices([0, 1, 2], [6, 3, 1])[0])),
                "insurance": {"payer": rng.choice(PAYERS), "member_id": f"{rng.choice('ABCDEFGHJK')}{rng.randint(10**8, 10**9 - 1)}"},
                "appointment_ids": [], "record_ids": [], "prescription_ids": [], "device_ids": [],
            }
        # Some patients carry medications with a flagged interaction between them.
        ids = list(self.patients)
        for k, pid in enumerate(ids[7::23]):
            self.conditions[pid] = ["atrial fibrillation", "osteoarthritis"] if k % 2 == 0 else ["depression", "migraine"]
        # ... and some carry an interaction that is known but not flagged.
        mild = [["hypertension", "osteoarthritis"], ["hypothyroidism", "gerd"], ["depression", "insomnia"]]
        for k, pid in enumerate(ids[12::21]):
            self.conditions[pid] = list(mild[k % 3])

    def _specialists(self, specialty: str) -> list[dict[str, Any]]:
        return [p for p in self.providers.values() if p["specialty"] == specialty]

    def make_prescriptions(self) -> None:
        rng = self.rng
        forced = set(list(self.patients)[7::23]) | set(list(self.patients)[12::21])
        n = 20001
        for pid, conditions in self.conditions.items():
            for condition in conditions:
                meds = CONDITIONS[condition][3]
                chosen = [meds[0]] if pid in forced else rng.sample(meds, 2 if len(meds) > 2 and rng.random() < 0.25 else 1)
                specialty = CONDITIONS[condition][2]
                for med in chosen:
                    prescriber = (rng.choice(self._specialists(specialty))["provider_id"]
                                  if specialty != "primary_care" and rng.random() < 0.6
                                  else self.patients[pid]["primary_provider_id"])
                    stockists = [s for s in self.suppliers.values() if med in s["stocks"]]
                    rx_id = f"RX{n}"
                    n += 1
                    self.prescriptions[rx_id] = {
                        "prescription_id": rx_id, "patient_id": pid, "medication": med, "dosage": DOSAGES[med],
                        "prescriber_id": prescriber, "supplier_id": rng.choice(stockists)["supplier_id"],
                        "status": "active" if pid in forced or rng.random() < 0.88 else "discontinued",
                        "refills_remaining": rng.randint(0, 5),
                        "start_date": (HISTORY_START - dt.timedelta(days=rng.randint(0, 900))).isoformat(),
                    }
                    self.patients[pid]["prescription_ids"].append(rx_id)

    # ----------------------------------------------------------------- visits
    def _visit(self, pid: str) -> tuple[dict[str, Any], str, str | None]:
        """(provider, reason, condition or None) for one visit of patient `pid`."""
        rng = self.rng
        conditions = self.conditions[pid]
        primary = self.providers[self.patients[pid]["primary_provider_id"]]
        if conditions and rng.random() < 0.8:
            condition = rng.choice(conditions)
            specialty = CONDITIONS[condition][2]
            reasons = CONDITIONS[condition][4]
            fitting_primary = [r for r in reasons if _fits(r, "primary_care")]
            if fitting_primary and rng.random() < 0.4:
                return primary, rng.choice(fitting_primary), condition
            provider = rng.choice(self._specialists(specialty)) if specialty != "primary_care" else primary
            return provider, rng.choice([r for r in reasons if _fits(r, provider["specialty"])]), condition
        return primary, rng.choice(GENERAL_VISITS)[0], None

    def _past_start(self, provider: dict[str, Any]) -> str | None:
        rng = self.rng
        span = (HORIZON_START - dt.timedelta(days=3) - HISTORY_START).days
        for _ in range(40):
            day = HISTORY_START + dt.timedelta(days=rng.randint(0, span))
            weekday = day.weekday()
            if weekday > 4 or WEEKDAYS[weekday] not in provider["weekly_schedule"]:
                continue
            slots = _slots_of_day(day, provider["weekly_schedule"][WEEKDAYS[weekday]])
            start = rng.choice(slots)
            if start not in self.busy[provider["provider_id"]]:
                return start
        return None

    def _future_start(self, provider: dict[str, Any], minutes: int) -> str | None:
        rng = self.rng
        open_slots = [s for s in provider["available_slots"] if s > NOW]
        rng.shuffle(open_slots)
        free = set(provider["available_slots"])
        for start in open_slots:
            if all(s in free for s in slots_for(start, minutes)):
                return start
        return None

    def make_appointments(self) -> None:
        rng = self.rng
        for pid in self.patients:
            taken: list[tuple[str, int]] = []
            for _ in range(rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5])):
                provider, reason, condition = self._visit(pid)
                upcoming = rng.random() < 0.28
                minutes = 60 if rng.random() < 0.2 else 30
                start = self._future_start(provider, minutes) if upcoming else self._past_start(provider)
                if start is None or any(
                    parse(start) < parse(s) + dt.timedelta(minutes=m) and parse(s) < parse(start) + dt.timedelta(minutes=minutes)
                    for s, m in taken
                ):
                    continue
                if upcoming:
                    status = "cancelled" if rng.random() < 0.08 else "scheduled"
                    created = dt.datetime(2025, 2, 10, 8) + dt.timedelta(minutes=30 * rng.randint(0, 1300))
                else:
                    status = "cancelled" if rng.random() < 0.12 else "completed"
                    created = parse(start) - dt.timedelta(days=rng.randint(2, 30), minutes=30 * rng.randint(0, 16))
                if status != "cancelled":
                    taken.append((start, minutes))
                    self.busy[provider["provider_id"]].update(slots_for(start, minutes))
                    if upcoming:
                        gone = set(slots_for(start, minutes))
                        provider["available_slots"] = [s for s in provider["available_slots"] if s not in gone]
                self.appointments.append({
                    "patient_id": pid, "provider_id": provider["provider_id"], "start": start,
                    "duration_minutes": minutes, "status": status, "reason": reason,
                    "modality": "phone" if rng.random() < 0.1 else "video", "created_at": fmt(created),
                    "_condition": condition,
                })
        self.appointments.sort(key=lambda a: (a["created_at"], a["patient_id"]))
        for i, a in enumerate(self.appointments):
            a["appointment_id"] = f"APT{10001 + i}"
            self.patients[a["patient_id"]]["appointment_ids"].append(a["appointment_id"])

    def make_records(self) -> None:
        rng = self.rng
        general = {reason: (code, text) for reason, code, text in GENERAL_VISITS}
        visits = sorted((a for a in self.appointments if a["status"] == "completed"), key=lambda a: a["start"])
        n = 30001
        for a in visits:
            if rng.random() > 0.75:
                continue
            pid, condition = a["patient_id"], a["_condition"]
            provider = self.providers[a["provider_id"]]
            doctor = f"{'Dr. ' if provider['title'] != 'NP' else ''}{provider['first_name']} {provider['last_name']}" + (
                ", NP" if provider["title"] == "NP" else "")
            if condition:
                code, text = CONDITIONS[condition][0], CONDITIONS[condition][1]
                meds = [rx for rx in self.patients[pid]["prescription_ids"]
                        if self.prescriptions[rx]["medication"] in CONDITIONS[condition][3]]
                summary = f"Video visit for {a['reason']}. {text} reviewed; current plan discussed with the patient."
            else:
                code, text = general[a["reason"]]
                meds = []
                summary = f"Video visit for {a['reason']}. Assessment and advice given; follow up as needed."
            day = a["start"][:10]
            notes = []
            for k in range(rng.choices([0, 1, 2], [3, 5, 2])[0]):
                note_text = rng.choice([
                    "Patient reports good adherence and no side effects.",
                    "Discussed diet, exercise and sleep habits.",
                    "Reviewed home readings; no changes needed today.",
                    "Patient asked for printed visit instructions; sent through the portal.",
                    "Follow up in three months or sooner if symptoms worsen.",
                    "Patient prefers afternoon appointments.",
                ])
                notes.append({"written_at": f"{day}T{17 + k}:{rng.choice(['05', '20', '40'])}:00", "author": doctor, "text": note_text})
            rid = f"MR{n}"
            n += 1
            self.records[rid] = {
                "record_id": rid, "patient_id": pid, "provider_id": provider["provider_id"],
                "appointment_id": a["appointment_id"], "visit_date": day, "summary": summary,
                "diagnoses": [{"code": code, "description": text}], "prescription_ids": meds[: rng.randint(0, len(meds))] if meds else [],
                "notes": notes,
            }
            self.patients[pid]["record_ids"].append(rid)

    # ----------------------------------------------------------------- telemetry
    def _reading(self, device_type: str, base: float) -> tuple[dict[str, float], bool]:
        g = self.rng.gauss
        if device_type == "blood pressure cuff":
            sys_, dia = round(g(base, 14)), round(g(base * 0.62, 9))
            return {"systolic": float(sys_), "diastolic": float(dia), "pulse": float(round(g(74, 8)))}, sys_ >= 160 or dia >= 100 or sys_ < 90
        if device_type == "glucose meter":
            value = round(g(base, 35))
            return {"glucose_mg_dl": float(value)}, value > 250 or value < 70
        if device_type == "pulse oximeter":
            spo2 = min(100, round(g(base, 2)))
            return {"spo2_pct": float(spo2), "pulse": float(round(g(78, 9)))}, spo2 < 90
        if device_type == "ECG patch":
            hr, burden = round(g(base, 12)), round(self.rng.uniform(0, 14), 1)
            return {"heart_rate": float(hr), "afib_burden_pct": burden}, hr > 120 or burden > 10
        return {"weight_kg": round(g(base, 0.6), 1)}, False

    def make_telemetry(self) -> None:
        rng = self.rng
        base = {"blood pressure cuff": 136.0, "glucose meter": 145.0, "pulse oximeter": 95.0, "ECG patch": 80.0}
        n_device, n_upload = 5001, 700001
        for pid, conditions in self.conditions.items():
            wanted = [CONDITIONS[c][5] for c in conditions if CONDITIONS[c][5] and rng.random() < 0.7]
            if ("hypertension" in conditions or "type 2 diabetes" in conditions) and rng.random() < 0.25:
                wanted.append("weight scale")
            for device_type in dict.fromkeys(wanted):
                did = f"DEV{n_device}"
                n_device += 1
                active = rng.random() < 0.85
                paired = dt.date(2024, 6, 1) + dt.timedelta(days=rng.randint(0, 200))
                if active:
                    days = sorted(rng.sample(range(1, 15), rng.randint(4, 10)), reverse=True)
                else:
                    days = sorted(rng.sample(range(30, 90), rng.randint(2, 4)), reverse=True)
                level = base.get(device_type, rng.uniform(60, 110))
                level += rng.uniform(-8, 12) if device_type != "pulse oximeter" else rng.uniform(-3, 2)
                last = None
                for d in days:
                    moment = parse(NOW).replace(hour=rng.choice([7, 8, 12, 19, 21]), minute=rng.choice([0, 15, 30, 45])) - dt.timedelta(days=d)
                    readings, out = self._reading(device_type, level)
                    uid = f"UP{n_upload}"
                    n_upload += 1
                    self.uploads[uid] = {"upload_id": uid, "device_id": did, "patient_id": pid,
                                         "recorded_at": fmt(moment), "readings": readings, "out_of_range": out}
                    last = fmt(moment)
                self.devices[did] = {
                    "device_id": did, "patient_id": pid, "device_type": device_type,
                    "model": rng.choice(DEVICE_MODELS[device_type]), "status": "active" if active else "inactive",
                    "paired_on": paired.isoformat(), "last_upload_at": last,
                }
                self.patients[pid]["device_ids"].append(did)

    # ----------------------------------------------------------------- the rest
    @staticmethod
    def interactions() -> dict[str, dict[str, Any]]:
        out = {}
        for i, (a, b, severity, flagged, text) in enumerate(INTERACTIONS):
            iid = f"INT{i + 1:03d}"
            out[iid] = {"interaction_id": iid, "medication_a": a, "medication_b": b, "severity": severity,
                        "flagged": flagged, "description": text}
        return out

    @staticmethod
    def regimens() -> dict[str, dict[str, Any]]:
        out = {}
        for condition, (code, text, _, meds, _, device) in CONDITIONS.items():
            short = code.replace(".", "")
            options = [[m] for m in meds[:3]]
            if len(meds) >= 2 and condition not in ("asthma", "eczema"):
                options.append(meds[:2])
            for k, combo in enumerate(options, start=1):
                pid = f"RG-{short}-{k}"
                name = f"{combo[0].capitalize()} monotherapy" if len(combo) == 1 else " + ".join(m.capitalize() for m in combo) + " combination"
                out[pid] = {
                    "plan_id": pid, "condition": condition, "code": code, "name": name,
                    "description": f"Standard option for {text.lower()}: {', '.join(DOSAGES[m] + ' ' + m for m in combo)}.",
                    "medications": combo, "monitoring_device": device,
                    "follow_up_weeks": 4 if k == 1 else (8 if len(combo) == 1 else 6),
                }
        return out

    def build(self, patients: int = 200) -> dict[str, Any]:
        self.make_providers()
        self.make_suppliers()
        self.make_patients(patients)
        self.make_prescriptions()
        self.make_appointments()
        self.make_records()
        self.make_telemetry()
        appointments = {}
        for a in sorted(self.appointments, key=lambda a: a["appointment_id"]):
            a.pop("_condition")
            appointments[a["appointment_id"]] = {
                k: a[k] for k in ("appointment_id", "patient_id", "provider_id", "start", "duration_minutes",
                                  "status", "reason", "modality", "created_at")
            }
        return {
            "patients": self.patients,
            "providers": self.providers,
            "appointments": appointments,
            "records": self.records,
            "prescriptions": self.prescriptions,
            "suppliers": self.suppliers,
            "interactions": self.interactions(),
            "regimens": self.regimens(),
            "devices": self.devices,
            "uploads": self.uploads,
        }


def generate(seed: int = SEED) -> dict[str, Any]:
    return Generator(seed).build()


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Regenerate the telehealth db.json (deterministic).")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("db.json"))
    args = parser.parse_args(argv)
    args.out.write_text(dumps(generate(args.seed)), encoding="utf-8")


if __name__ == "__main__":
    main()
