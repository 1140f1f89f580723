from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SearchRequest(_message.Message):
    __slots__ = ("question", "top_k", "doc_types", "task")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    DOC_TYPES_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    question: str
    top_k: int
    doc_types: _containers.RepeatedScalarFieldContainer[str]
    task: str
    def __init__(self, question: _Optional[str] = ..., top_k: _Optional[int] = ..., doc_types: _Optional[_Iterable[str]] = ..., task: _Optional[str] = ...) -> None: ...

class Passage(_message.Message):
    __slots__ = ("label", "content_id", "doc_id", "title", "source", "page_start", "page_end", "line_start", "line_end", "score", "text", "section")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_ID_FIELD_NUMBER: _ClassVar[int]
    DOC_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_START_FIELD_NUMBER: _ClassVar[int]
    PAGE_END_FIELD_NUMBER: _ClassVar[int]
    LINE_START_FIELD_NUMBER: _ClassVar[int]
    LINE_END_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    label: str
    content_id: str
    doc_id: str
    title: str
    source: str
    page_start: int
    page_end: int
    line_start: int
    line_end: int
    score: float
    text: str
    section: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, label: _Optional[str] = ..., content_id: _Optional[str] = ..., doc_id: _Optional[str] = ..., title: _Optional[str] = ..., source: _Optional[str] = ..., page_start: _Optional[int] = ..., page_end: _Optional[int] = ..., line_start: _Optional[int] = ..., line_end: _Optional[int] = ..., score: _Optional[float] = ..., text: _Optional[str] = ..., section: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("question", "covered", "hits", "warnings", "route_rule")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    COVERED_FIELD_NUMBER: _ClassVar[int]
    HITS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    ROUTE_RULE_FIELD_NUMBER: _ClassVar[int]
    question: str
    covered: bool
    hits: _containers.RepeatedCompositeFieldContainer[Passage]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    route_rule: str
    def __init__(self, question: _Optional[str] = ..., covered: _Optional[bool] = ..., hits: _Optional[_Iterable[_Union[Passage, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ..., route_rule: _Optional[str] = ...) -> None: ...

class ChatTurn(_message.Message):
    __slots__ = ("role", "content")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    role: str
    content: str
    def __init__(self, role: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class AskRequest(_message.Message):
    __slots__ = ("question", "top_k", "doc_types", "task", "history")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    DOC_TYPES_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    question: str
    top_k: int
    doc_types: _containers.RepeatedScalarFieldContainer[str]
    task: str
    history: _containers.RepeatedCompositeFieldContainer[ChatTurn]
    def __init__(self, question: _Optional[str] = ..., top_k: _Optional[int] = ..., doc_types: _Optional[_Iterable[str]] = ..., task: _Optional[str] = ..., history: _Optional[_Iterable[_Union[ChatTurn, _Mapping]]] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("label", "content_id", "source", "title", "page_start", "page_end", "line_start", "line_end")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    PAGE_START_FIELD_NUMBER: _ClassVar[int]
    PAGE_END_FIELD_NUMBER: _ClassVar[int]
    LINE_START_FIELD_NUMBER: _ClassVar[int]
    LINE_END_FIELD_NUMBER: _ClassVar[int]
    label: str
    content_id: str
    source: str
    title: str
    page_start: int
    page_end: int
    line_start: int
    line_end: int
    def __init__(self, label: _Optional[str] = ..., content_id: _Optional[str] = ..., source: _Optional[str] = ..., title: _Optional[str] = ..., page_start: _Optional[int] = ..., page_end: _Optional[int] = ..., line_start: _Optional[int] = ..., line_end: _Optional[int] = ...) -> None: ...

class ModelUse(_message.Message):
    __slots__ = ("tier", "model", "reason")
    TIER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    tier: str
    model: str
    reason: str
    def __init__(self, tier: _Optional[str] = ..., model: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("question", "answer", "covered", "mode", "citations", "removed_labels", "warnings", "trace_id", "model", "timings_ms", "retrieval_query", "reason", "confidence", "blocks_json", "block_labels", "answered_by")
    class TimingsMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    COVERED_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    REMOVED_LABELS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_QUERY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_JSON_FIELD_NUMBER: _ClassVar[int]
    BLOCK_LABELS_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_BY_FIELD_NUMBER: _ClassVar[int]
    question: str
    answer: str
    covered: bool
    mode: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    removed_labels: _containers.RepeatedScalarFieldContainer[str]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    trace_id: str
    model: ModelUse
    timings_ms: _containers.ScalarMap[str, float]
    retrieval_query: str
    reason: str
    confidence: float
    blocks_json: str
    block_labels: _containers.RepeatedScalarFieldContainer[str]
    answered_by: str
    def __init__(self, question: _Optional[str] = ..., answer: _Optional[str] = ..., covered: _Optional[bool] = ..., mode: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., removed_labels: _Optional[_Iterable[str]] = ..., warnings: _Optional[_Iterable[str]] = ..., trace_id: _Optional[str] = ..., model: _Optional[_Union[ModelUse, _Mapping]] = ..., timings_ms: _Optional[_Mapping[str, float]] = ..., retrieval_query: _Optional[str] = ..., reason: _Optional[str] = ..., confidence: _Optional[float] = ..., blocks_json: _Optional[str] = ..., block_labels: _Optional[_Iterable[str]] = ..., answered_by: _Optional[str] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ("stage",)
    STAGE_FIELD_NUMBER: _ClassVar[int]
    stage: str
    def __init__(self, stage: _Optional[str] = ...) -> None: ...

class AskEvent(_message.Message):
    __slots__ = ("status", "delta", "answer")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    status: Status
    delta: str
    answer: Answer
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., delta: _Optional[str] = ..., answer: _Optional[_Union[Answer, _Mapping]] = ...) -> None: ...

class DocumentMetaRequest(_message.Message):
    __slots__ = ("doc_id",)
    DOC_ID_FIELD_NUMBER: _ClassVar[int]
    doc_id: str
    def __init__(self, doc_id: _Optional[str] = ...) -> None: ...

class VersionInfo(_message.Message):
    __slots__ = ("version", "status", "chunks", "pages", "staged_at", "searchable_at")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    STAGED_AT_FIELD_NUMBER: _ClassVar[int]
    SEARCHABLE_AT_FIELD_NUMBER: _ClassVar[int]
    version: str
    status: str
    chunks: int
    pages: int
    staged_at: str
    searchable_at: str
    def __init__(self, version: _Optional[str] = ..., status: _Optional[str] = ..., chunks: _Optional[int] = ..., pages: _Optional[int] = ..., staged_at: _Optional[str] = ..., searchable_at: _Optional[str] = ...) -> None: ...

class DocumentMeta(_message.Message):
    __slots__ = ("doc_id", "title", "source", "doc_type", "modified", "pages", "current_version", "versions")
    DOC_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DOC_TYPE_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    CURRENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    doc_id: str
    title: str
    source: str
    doc_type: str
    modified: str
    pages: int
    current_version: str
    versions: _containers.RepeatedCompositeFieldContainer[VersionInfo]
    def __init__(self, doc_id: _Optional[str] = ..., title: _Optional[str] = ..., source: _Optional[str] = ..., doc_type: _Optional[str] = ..., modified: _Optional[str] = ..., pages: _Optional[int] = ..., current_version: _Optional[str] = ..., versions: _Optional[_Iterable[_Union[VersionInfo, _Mapping]]] = ...) -> None: ...

class UploadRequest(_message.Message):
    __slots__ = ("filename", "content", "title", "department", "doc_type", "acl_tags", "source_trust", "batch_id", "public")
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DEPARTMENT_FIELD_NUMBER: _ClassVar[int]
    DOC_TYPE_FIELD_NUMBER: _ClassVar[int]
    ACL_TAGS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TRUST_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_FIELD_NUMBER: _ClassVar[int]
    filename: str
    content: bytes
    title: str
    department: str
    doc_type: str
    acl_tags: _containers.RepeatedScalarFieldContainer[str]
    source_trust: float
    batch_id: str
    public: bool
    def __init__(self, filename: _Optional[str] = ..., content: _Optional[bytes] = ..., title: _Optional[str] = ..., department: _Optional[str] = ..., doc_type: _Optional[str] = ..., acl_tags: _Optional[_Iterable[str]] = ..., source_trust: _Optional[float] = ..., batch_id: _Optional[str] = ..., public: _Optional[bool] = ...) -> None: ...

class UploadResponse(_message.Message):
    __slots__ = ("doc_id", "job_id", "version", "state", "reason", "source")
    DOC_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    doc_id: str
    job_id: str
    version: str
    state: str
    reason: str
    source: str
    def __init__(self, doc_id: _Optional[str] = ..., job_id: _Optional[str] = ..., version: _Optional[str] = ..., state: _Optional[str] = ..., reason: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class JobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("doc_id",)
    DOC_ID_FIELD_NUMBER: _ClassVar[int]
    doc_id: str
    def __init__(self, doc_id: _Optional[str] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("job_id", "kind", "state", "done", "reason", "doc_id", "version", "batch_id", "source", "attempts", "created_at", "updated_at")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DOC_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    kind: str
    state: str
    done: bool
    reason: str
    doc_id: str
    version: str
    batch_id: str
    source: str
    attempts: int
    created_at: str
    updated_at: str
    def __init__(self, job_id: _Optional[str] = ..., kind: _Optional[str] = ..., state: _Optional[str] = ..., done: _Optional[bool] = ..., reason: _Optional[str] = ..., doc_id: _Optional[str] = ..., version: _Optional[str] = ..., batch_id: _Optional[str] = ..., source: _Optional[str] = ..., attempts: _Optional[int] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ...) -> None: ...

class GatewayRequest(_message.Message):
    __slots__ = ("name", "params", "question")
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    params: _containers.ScalarMap[str, str]
    question: str
    def __init__(self, name: _Optional[str] = ..., params: _Optional[_Mapping[str, str]] = ..., question: _Optional[str] = ...) -> None: ...

class GatewayResponse(_message.Message):
    __slots__ = ("trace_id", "status", "message", "source_id", "labels", "blocks_json")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_JSON_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    status: str
    message: str
    source_id: str
    labels: _containers.RepeatedScalarFieldContainer[str]
    blocks_json: str
    def __init__(self, trace_id: _Optional[str] = ..., status: _Optional[str] = ..., message: _Optional[str] = ..., source_id: _Optional[str] = ..., labels: _Optional[_Iterable[str]] = ..., blocks_json: _Optional[str] = ...) -> None: ...
