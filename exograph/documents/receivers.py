"""A document removed by a cascade (its graph or account deleted) before it was processed is refunded.

The pipeline task that is still queued then finds nothing, logs the id and stops.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import pre_delete
from django.dispatch import receiver

from exograph.documents.models import Document
from exograph.documents.services import document_refund_unprocessed


@receiver(pre_delete, sender=Document)
def _refund_unprocessed_document(sender: type, instance: Document, **kwargs: Any) -> None:
    document_refund_unprocessed(document=instance)
