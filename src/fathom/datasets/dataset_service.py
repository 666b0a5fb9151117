"""Knowledge bases and their folders: create (the embedding model chosen, ``auto`` guessed from the
text), list, find with the owner, delete with the files only they used, and the folder path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fathom.datasets.auto_model import AUTO_VECTOR_MODEL, choose_model
from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.errors import EmbeddingModelNotConfigured, InvalidDatasetRequest
from fathom.datasets.model_training import ChatModels
from fathom.datasets.reembed import ReembedService
from fathom.datasets.search_test import SearchTestAsk, SearchTester, SearchTestOutcome
from fathom.datasets.training_choice import TrainingChecks
from fathom.store.files import LocalFileStore
from fathom.store.knowledge import SqlDatasetRepository
from fathom.store.protocols import DatasetRecord


@dataclass(frozen=True)
class NewDataset:
    """A knowledge base (or folder) to create; ``vector_model`` "" is the default model, ``auto`` a guess
    from the name and intro that the first import decides."""

    name: str
    intro: str = ""
    type: str = "dataset"
    vector_model: str = ""
    agent_model: str = ""
    vlm_model: str = ""
    parent_id: str | None = None


class DatasetService:
    def __init__(
        self,
        datasets: SqlDatasetRepository,
        files: LocalFileStore,
        embedders: EmbedderResolver,
        chat_models: ChatModels,
        search: SearchTester,
        reembed: ReembedService,
        vision_model: Callable[[str], str],
    ) -> None:
        self.datasets = datasets
        self.files = files
        self.embedders = embedders
        self.chat_models = chat_models
        self.tester = search
        self.reembed = reembed
        self.training_checks = TrainingChecks(chat_models, vision_model)

    async def find(self, team_id: str, dataset_id: str) -> tuple[DatasetRecord, str | None]:
        """The team's knowledge base or folder and the member who owns it (another team's is NotFound)."""
        dataset = await self.datasets.get_dataset(team_id, dataset_id)
        return dataset, await self.datasets.owner_of(dataset_id)

    async def create(self, team_id: str, member_id: str | None, new: NewDataset) -> DatasetRecord:
        """Create it; an embedding model this server lacks is refused."""
        if new.type == "folder":
            return await self.datasets.create_dataset(
                team_id,
                new.name,
                vector_model=self.embedders.default_model_id,
                intro=new.intro,
                member_id=member_id,
                type="folder",
                parent_id=new.parent_id,
            )
        auto_reason = None
        if new.vector_model == AUTO_VECTOR_MODEL:  # a guess from name and intro; the first import decides
            choice = choose_model(
                f"{new.name}\n{new.intro}", self.embedders.default_model_id, "the name and intro"
            )
            vector_model, auto_reason = choice.model, f"until the first import: {choice.reason}"
        else:
            vector_model = self.embedders.resolve_model_id(new.vector_model)
        self.require_embedding_model(vector_model)
        vlm_model = self.checked_vlm_model(new.vlm_model) if new.vlm_model else ""
        return await self.datasets.create_dataset(
            team_id,
            new.name,
            vector_model=vector_model,
            intro=new.intro,
            agent_model=new.agent_model,
            vlm_model=vlm_model,
            member_id=member_id,
            auto_model_reason=auto_reason,
            parent_id=new.parent_id,
        )

    async def move(self, team_id: str, dataset_id: str, parent_id: str | None) -> None:
        """Move it into the folder ``parent_id`` (None: the root); not into itself or what it holds."""
        try:
            await self.datasets.move_dataset(team_id, dataset_id, parent_id)
        except ValueError as exc:
            raise InvalidDatasetRequest(str(exc)) from None

    def check_model_change(self, dataset: DatasetRecord, vector_model: str) -> None:
        """Refuse a new embedding model for a folder, or one this server cannot run."""
        if dataset.type == "folder":
            raise InvalidDatasetRequest(
                "vectorModel: a folder has no embedding model; change its knowledge bases'"
            )
        self.require_embedding_model(vector_model)

    async def update(
        self,
        team_id: str,
        dataset_id: str,
        *,
        name: str | None,
        intro: str | None,
        vector_model: str,
        vlm_model: str | None = None,
    ) -> None:
        """Change what is sent (None, "": unchanged). A new ``vector_model`` (checked with
        :meth:`check_model_change`) queues a ``dataset.reembed`` job: the knowledge base keeps searching
        with its old model until every index text is embedded again."""
        changes: dict[str, Any] = {}
        if name is not None:
            changes["name"] = name
        if intro is not None:
            changes["intro"] = intro
        if vlm_model is not None:  # checked by the caller with checked_vlm_model before any change
            changes["vlm_model"] = vlm_model
        if vector_model:
            changes.update(auto_model_pending=False, auto_model_reason=None)  # chosen by name, not by auto
        if changes:
            await self.datasets.update_dataset(team_id, dataset_id, **changes)
        if vector_model:
            await self.reembed.change_model(team_id, dataset_id, vector_model)

    def checked_vlm_model(self, model_id: str) -> str:
        """``model_id`` if it names a configured chat model that takes images; else a refusal saying so."""
        try:
            return self.training_checks.vision_model(model_id)
        except LookupError as exc:
            raise InvalidDatasetRequest(f"vlmModel: {exc}") from None

    def require_embedding_model(self, model_id: str) -> None:
        """Refuse an embedding model this server cannot run."""
        try:
            self.embedders.get(model_id)
        except LookupError:
            raise EmbeddingModelNotConfigured(model_id) from None

    async def list_datasets(
        self, team_id: str, *, parent_id: str | None, search: str, type: str | None
    ) -> list[tuple[DatasetRecord, str | None]]:
        """Those in the folder (None: the root), or with ``search`` those of any folder whose name or
        intro holds it (any case), of ``type`` when given; each with its owner."""
        search = search.lower()
        found = []
        for dataset in await self.datasets.list_datasets(
            team_id, parent_id=parent_id, every_level=bool(search)
        ):
            if search and search not in dataset.name.lower() and search not in dataset.intro.lower():
                continue
            if type and dataset.type != type:
                continue
            found.append((dataset, await self.datasets.owner_of(dataset.id)))
        return found

    async def delete(self, team_id: str, dataset_id: str) -> None:
        """Delete it (a folder: with what is in it) and the files no other collection uses, so the team's
        storage quota goes down."""
        file_ids = await self.datasets.file_ids(team_id, dataset_id)
        await self.datasets.delete_dataset(team_id, dataset_id)
        await self.files.delete_unused(team_id, file_ids)

    async def path(self, folder_id: str) -> list[tuple[str, str]]:
        """(id, name) of the folders from the root's child down to ``folder_id``."""
        return [(item_id, name) for item_id, _, name in reversed(await self.datasets.lineage(folder_id))]

    async def search_test(
        self, team_id: str, dataset: DatasetRecord, ask: SearchTestAsk
    ) -> SearchTestOutcome:
        return await self.tester.run(team_id, dataset, ask)
