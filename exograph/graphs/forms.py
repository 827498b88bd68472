from __future__ import annotations

from django import forms

from exograph.core.scope import Scope
from exograph.graphs.selectors import MAX_N_RESULTS, MAX_QUERY_LENGTH


class GraphCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    scope = forms.ChoiceField(
        choices=Scope.choices, initial=Scope.PRIVATE, help_text="World graphs are shared with everyone."
    )


class GraphRenameForm(forms.Form):
    name = forms.CharField(max_length=200)


class SearchForm(forms.Form):
    query = forms.CharField(max_length=MAX_QUERY_LENGTH)
    graph_scope = forms.ChoiceField(choices=Scope.choices, required=False, label="Scope")
    n_results = forms.IntegerField(min_value=1, max_value=MAX_N_RESULTS, initial=10, required=False)
    graph_id = forms.CharField(max_length=64, required=False, widget=forms.HiddenInput)


class WorldEntityForm(forms.Form):
    entity = forms.CharField(max_length=300, label="Entity name or id")
