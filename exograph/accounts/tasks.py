"""Celery entry points for accounts: thin, ids only, idempotent."""

from __future__ import annotations

import logging
import smtplib
from typing import Any

from celery import shared_task

from exograph.accounts.emails import email_verification_send, password_reset_send
from exograph.accounts.models import User
from exograph.core.queues import Queue

logger = logging.getLogger(__name__)


# Account emails: retried with backoff while the mail server refuses or cannot be reached.
EMAIL_TASK: dict[str, Any] = {
    "queue": Queue.DEFAULT.value,
    "acks_late": True,
    "autoretry_for": (smtplib.SMTPException, OSError),
    "retry_backoff": True,
    "max_retries": 5,
}


@shared_task(name="accounts.user_email_verification_send", **EMAIL_TASK)
def user_email_verification_send_task(user_id: int) -> None:
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None or user.email_verified:
        logger.info("account %s is gone or verified; no verification email", user_id)
        return
    email_verification_send(user=user)
    logger.info("verification email sent to account %s", user_id)


@shared_task(name="accounts.user_password_reset_send", **EMAIL_TASK)
def user_password_reset_send_task(user_id: int) -> None:
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None or not user.has_usable_password():
        logger.info("account %s is gone or has no password; no reset email", user_id)
        return
    password_reset_send(user=user)
    logger.info("password reset email sent to account %s", user_id)
