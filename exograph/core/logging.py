"""Log output: JSON lines for production, and a filter that keeps secrets out of every line."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime

# API keys (exo_<prefix>_<secret>), Stripe secrets and webhook secrets, bearer tokens, key= query values.
_SECRETS = re.compile(
    r"(?P<exo>exo_[A-Za-z0-9_\-]{6,})"
    r"|(?P<stripe>\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]+|\bwhsec_[A-Za-z0-9]+)"
    r"|(?P<bearer>(?i:bearer)\s+[A-Za-z0-9._~+/\-]+=*)"
    r"|(?P<param>\b(?i:(?:api_?key|key|token|secret|password)=)[^&\s\"']+)"
)


def redact(text: str) -> str:
    """text with anything that looks like a key or secret replaced by a marker. No side effects."""

    def replace(match: re.Match[str]) -> str:
        if match.group("param"):
            return match.group("param").split("=", 1)[0] + "=[redacted]"
        if match.group("bearer"):
            return "Bearer [redacted]"
        if match.group("exo"):
            return "exo_[redacted]"
        return "[redacted]"

    return _SECRETS.sub(replace, text)


class RedactSecretsFilter(logging.Filter):
    """On every handler: rewrites the record's message (and traceback) with secrets redacted."""

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep the record as it is
            return True
        record.msg, record.args = redact(message), None
        access = getattr(record, "access", None)  # the access log's structured fields (JSON lines)
        if isinstance(access, dict):
            record.access = {k: redact(v) if isinstance(v, str) else v for k, v in access.items()}
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        access = getattr(record, "access", None)
        if isinstance(access, dict):
            payload.update(access)
        if record.exc_info or record.exc_text:
            payload["exc"] = record.exc_text or self.formatException(record.exc_info)  # type: ignore[arg-type]
        return json.dumps(payload, default=str)
