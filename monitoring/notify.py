"""Alert notifications to webhooks, in the message format each receiver expects, with a
link that fixes the problem, and deduplicated: the same transition of the same alert is not
re-sent within `dedupe_s` (a flapping signal does not flood a chat group).

Formats (plain text everywhere, never markup built from alert text):
  generic  {"source": "ragline", "alerts": [{name, subject, status, ..., fix_url}]}
  wecom    {"msgtype": "text", "text": {"content": "..."}}        (WeCom group robot)
  feishu   {"msg_type": "text", "content": {"text": "..."}}       (Feishu/Lark custom bot)
  slack    {"text": "..."}                                        (Slack incoming webhook)
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from monitoring.alerts import Alert

log = logging.getLogger("ragline.alerts")
FORMATS = ("generic", "wecom", "feishu", "slack")


@dataclass(frozen=True, slots=True)
class Transition:
    alert: Alert
    status: str  # "firing" | "recovered"
    action: str = ""  # what the automatic action did (or undid)


@dataclass(frozen=True, slots=True)
class Delivery:
    url: str
    format: str
    outcome: str  # "notified" | "notify_failed" | "notify_suppressed"
    keys: tuple[tuple[str, str, str], ...]  # (alert, subject, status) covered
    error: str = ""


def fix_url(public_url: str, alert: Alert) -> str:
    if not alert.fix:
        return ""
    if alert.fix.startswith(("http://", "https://")):
        return alert.fix
    return public_url.rstrip("/") + "/" + alert.fix.lstrip("/")


def _line(t: Transition, public_url: str) -> str:
    a = t.alert
    head = "FIRING" if t.status == "firing" else "RECOVERED"
    subject = f" ({a.subject})" if a.subject else ""
    parts = [f"[{head}][{a.severity}] {a.name}{subject}: {a.message}"]
    if t.action:
        parts.append(f"Action: {t.action}")
    link = fix_url(public_url, a)
    if link and t.status == "firing":
        parts.append(f"Fix: {link}")
    return "\n".join(parts)


def render(fmt: str, transitions: Sequence[Transition], public_url: str, at: datetime) -> Any:
    """The request body for one webhook of format `fmt`."""
    if fmt == "generic":
        return {
            "source": "ragline",
            "alerts": [
                {
                    **t.alert.as_dict(),
                    "status": t.status,
                    "at": at.replace(tzinfo=UTC).isoformat(),
                    "action_taken": t.action,
                    "fix_url": fix_url(public_url, t.alert),
                }
                for t in transitions
            ],
        }
    text = "Ragline alerts\n" + "\n\n".join(_line(t, public_url) for t in transitions)
    if fmt == "wecom":
        return {"msgtype": "text", "text": {"content": text}}
    if fmt == "feishu":
        return {"msg_type": "text", "content": {"text": text}}
    if fmt == "slack":
        return {"text": text}
    raise ValueError(f"unknown webhook format {fmt!r} (one of {FORMATS})")


class Notifier:
    def __init__(
        self,
        webhooks: Sequence[tuple[str, str]],  # (url, format)
        *,
        public_url: str = "",
        timeout_s: float = 5.0,
        dedupe_s: float = 600.0,
        post: Callable[..., httpx.Response] = httpx.post,
    ) -> None:
        for _, fmt in webhooks:
            if fmt not in FORMATS:
                raise ValueError(f"unknown webhook format {fmt!r} (one of {FORMATS})")
        self._webhooks = list(webhooks)
        self._public_url = public_url
        self._timeout_s = timeout_s
        self._dedupe_s = dedupe_s
        self._post = post
        self._sent: dict[tuple[str, str, str, str], datetime] = {}  # (url, alert, subj, status)
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._webhooks)

    def _fresh(self, url: str, t: Transition, now: datetime) -> bool:
        key = (url, t.alert.name, t.alert.subject, t.status)
        with self._lock:
            last = self._sent.get(key)
            if last is not None and (now - last).total_seconds() < self._dedupe_s:
                return False
            self._sent[key] = now
            return True

    def send(self, transitions: Sequence[Transition], now: datetime) -> list[Delivery]:
        """POST the transitions to every webhook; never raises."""
        out: list[Delivery] = []
        for url, fmt in self._webhooks:
            fresh = [t for t in transitions if self._fresh(url, t, now)]
            stale = [t for t in transitions if t not in fresh]
            if stale:
                out.append(Delivery(url, fmt, "notify_suppressed", _keys(stale)))
            if not fresh:
                continue
            try:
                body = render(fmt, fresh, self._public_url, now)
                response = self._post(url, json=body, timeout=self._timeout_s)
                response.raise_for_status()
                # WeCom and Feishu answer 200 with an error code in the body.
                data = _json(response)
                code = data.get("errcode", data.get("code", 0)) if isinstance(data, dict) else 0
                if code not in (0, None):
                    raise RuntimeError(f"receiver refused the message: {data}")
                out.append(Delivery(url, fmt, "notified", _keys(fresh)))
            except Exception as exc:  # the alert is logged and audited; the hook must not kill us
                # A chat webhook's address is its credential: only its host is told.
                why = redacted(f"{type(exc).__name__}: {exc}")
                log.warning("alert webhook %s failed: %s", redacted(url), why)
                with self._lock:  # a failed send is retried on the next transition
                    for t in fresh:
                        self._sent.pop((url, t.alert.name, t.alert.subject, t.status), None)
                out.append(Delivery(url, fmt, "notify_failed", _keys(fresh), why))
        return out


_URL = re.compile(r"\b(https?://[^/\s'\"]+)[^\s'\"]*")


def redacted(text: str) -> str:
    """`text` with every URL cut to its scheme and host."""
    return _URL.sub(lambda m: f"{m.group(1)}/…", text)


def _keys(ts: Sequence[Transition]) -> tuple[tuple[str, str, str], ...]:
    return tuple((t.alert.name, t.alert.subject, t.status) for t in ts)


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
