"""Check and print the periodic jobs (settings.CELERY_BEAT_SCHEDULE) before celery beat starts.

The schedule itself lives in settings (one place, read by beat); this command fails loudly if
an entry names a task that does not exist or has no schedule, so a typo stops the deploy.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from exograph.celery import app


class Command(BaseCommand):
    help = "Validate and print the periodic Celery jobs (CELERY_BEAT_SCHEDULE)."

    def handle(self, *args: Any, **options: Any) -> None:
        app.loader.import_default_modules()
        schedule: dict[str, dict[str, Any]] = settings.CELERY_BEAT_SCHEDULE
        problems = []
        for name, entry in schedule.items():
            task = entry.get("task")
            if task not in app.tasks:
                problems.append(f"{name}: task {task!r} is not registered")
            if not entry.get("schedule"):
                problems.append(f"{name}: no schedule")
        if problems:
            raise CommandError("; ".join(problems))
        for name, entry in schedule.items():
            self.stdout.write(f"{name}: {entry['task']} every {entry['schedule']}")
        self.stdout.write(f"{len(schedule)} periodic jobs OK")
