"""Account and API-key use cases (a package): the one place that writes accounts and keys.

Layout: `users` (signup, email verification, password reset, login lockout, account deletion), `keys` (issue,
change, revoke and authenticate API keys), `key_cache` (the API-key lookup cache authentication reads first).
"""

from exograph.accounts.services.key_cache import api_key_cache_forget
from exograph.accounts.services.keys import (
    UNSET,
    api_key_authenticate,
    api_key_create,
    api_key_revoke,
    api_key_update,
)
from exograph.accounts.services.users import (
    account_delete,
    user_create,
    user_email_mark_verified,
    user_email_verification_request,
    user_email_verify,
    user_login_lockout_clear,
    user_password_reset_request,
)

__all__ = [
    "UNSET",
    "account_delete",
    "api_key_authenticate",
    "api_key_cache_forget",
    "api_key_create",
    "api_key_revoke",
    "api_key_update",
    "user_create",
    "user_email_mark_verified",
    "user_email_verification_request",
    "user_email_verify",
    "user_login_lockout_clear",
    "user_password_reset_request",
]
