"""Built-in app templates (FastGPT's ``/api/core/app/template/{list,detail}``), and ``create`` with a
``templateId``: FastGPT's template picker sends the template's ``modules``/``edges``/``chatConfig`` along
with its id (those win); a body with only the id gets the template's graph from here.
"""

from __future__ import annotations

from typing import Any

from fathom.chat.errors import ChatError
from fathom.chat.simple_form import form_to_workflow

_TEMPLATES: dict[str, dict[str, Any]] = {
    "simpleChat": {
        "name": "Simple chat",
        "intro": "An AI chat with a system prompt; pick the model and write the prompt.",
        "type": "simple",
        "form": {"aiSettings": {"systemPrompt": ""}, "chatConfig": {"welcomeText": ""}},
    },
    "simpleDatasetChat": {
        "name": "Knowledge-base chat",
        "intro": "Searches the knowledge bases you pick and answers from what it finds.",
        "type": "simple",
        "form": {
            "aiSettings": {"systemPrompt": ""},
            "dataset": {"datasets": [], "searchMode": "mixedRecall", "similarity": 0.4, "limit": 3000},
            "chatConfig": {"welcomeText": ""},
        },
    },
}


def _workflow(template: dict[str, Any]) -> dict[str, Any]:
    form = template["form"]
    if form.get("dataset", {}).get("datasets") == []:
        # compile with a placeholder so the search node exists, then leave its selection empty
        compiled = form_to_workflow({**form, "dataset": {**form["dataset"], "datasets": [{"datasetId": ""}]}})
        for node in compiled["nodes"]:
            for item in node["inputs"]:
                if node["flowNodeType"] == "datasetSearchNode" and item["key"] == "datasets":
                    item["value"] = []
        return compiled
    return form_to_workflow(form)


def template_list() -> list[dict[str, Any]]:
    """The built-in templates, without their graphs."""
    return [
        {
            "templateId": key,
            "name": t["name"],
            "intro": t["intro"],
            "type": t["type"],
            "avatar": "",
            "tags": [],
        }
        for key, t in _TEMPLATES.items()
    ]


def template_detail(template_id: str) -> dict[str, Any]:
    """One template with its ``workflow`` (a 400 naming the known ids when there is none)."""
    template = _TEMPLATES.get(template_id)
    if template is None:
        raise ChatError(
            f"templateId: no built-in template {template_id!r}; known: {', '.join(_TEMPLATES)} "
            "(or send the template's modules, edges and chatConfig)",
            http_status=400,
            status_text="invalidParams",
        )
    return {
        "templateId": template_id,
        "name": template["name"],
        "intro": template["intro"],
        "type": template["type"],
        "avatar": "",
        "tags": [],
        "workflow": _workflow(template),
    }


def apply_template(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with the template's graph, type and name filled in where the body has none."""
    template_id = values.get("templateId")
    if not template_id or any(values.get(key) is not None for key in ("modules", "nodes", "aiSettings")):
        return values
    detail = template_detail(str(template_id))
    return {
        **detail["workflow"],
        **{k: v for k, v in values.items() if v is not None},
        "type": values.get("type") or detail["type"],
        "name": values.get("name") or detail["name"],
    }
