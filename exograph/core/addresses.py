"""What counts as one email address: the once-per-address signup grant is keyed on it (billing.credits_grant_signup),
and the password-reset emails of one address are capped by it (accounts).

The rule (kept narrow so two different people never share an address): lower-cased and stripped; the local part
loses a '+tag' (gmail, Outlook, Fastmail, Proton and most others deliver `dora+x@` to `dora@`); at Gmail
(gmail.com, googlemail.com) the dots of the local part go too, and googlemail.com is gmail.com.
"""

from __future__ import annotations

from django.utils.crypto import salted_hmac

GMAIL_DOMAINS = frozenset({"gmail.com", "googlemail.com"})


def email_canonical(email: str) -> str:
    """The address as one mailbox: see the module docstring. Pure."""
    address = email.strip().lower()
    local, at, domain = address.rpartition("@")
    if not at or not local:
        return address
    untagged = local.split("+", 1)[0]
    local = untagged or local  # '+tag@' alone: nothing to keep, so as written
    if domain in GMAIL_DOMAINS:
        local, domain = local.replace(".", "") or local, "gmail.com"
    return f"{local}@{domain}"


def email_digest(email: str) -> str:
    """HMAC-SHA256 (SECRET_KEY) of the canonical address: it outlives the account without keeping the address."""
    return salted_hmac(
        "exograph.accounts.addresses.email_digest",  # the salt of the digests already stored: never changes
        email_canonical(email),
        algorithm="sha256",
    ).hexdigest()
