// Mirror of tb_graph_plugin/wire.py, field for field. Bump WIRE_VERSION together.
// Coordinates are absolute pixels, y downwards; x/y are a node's centre.

export const WIRE_VERSION = 1;

export type GraphKind = "op" | "conceptual" | "profile";
export type NodeKind = "op" | "meta" | "series" | "bridge" | "in_embedding" | "out_embedding" | "stub";
export type EdgeKind = "data" | "control" | "reference";
export type JobState = "running" | "done" | "failed";
// How a group that is no scope was found: from layer-name indices, or as a region of the dataflow.
export type Inferred = "" | "name" | "dataflow" | "source" | "library" | "kernel";

export interface GraphRef {
  run: string;
  tag: string;
  kind: GraphKind;
  step: number | null;
}

// What torch.compile made of the call a run graph shows (add_compiled_graph wrote it beside the graph).
export interface CompileFacts {
  graphs: number;
  graph_breaks: number;
  recompilations: number;
  kernels: number;
}

export interface StepListing {
  step: number;
  wall_time: number;
  compile: CompileFacts | null; // a torch.compile run graph's (run graph tag only)
}

export interface TagListing {
  tag: string;
  run_graph: boolean;
  op_graph: boolean;
  conceptual_graph: boolean;
  profile: boolean;
  steps: StepListing[];
}

export interface RunListing {
  run: string;
  tags: TagListing[];
}

export interface Listing {
  runs: RunListing[];
  default: GraphRef | null;
  data_location: string; // the logdir (the data provider's data location): bookmarks are kept per it
  version: number;
}

export interface SceneNode {
  name: string;
  label: string;
  kind: NodeKind;
  x: number;
  y: number;
  width: number;
  height: number;
  parent: string | null;
  expanded: boolean;
  cardinality: number;
  op: string | null;
  device: string | null;
  xla_cluster: string | null;
  template: string | null;
  compute_time_us: number | null;
  memory_bytes: number | null;
  tpu_compatible: boolean | null;
  extracted: boolean;
  of: string | null;
  artificial: boolean; // a group made by splitting a wide group ("adam [1-1000]"), not a scope
  inferred: Inferred; // a group found from layer-name indices or the dataflow, not a scope
}

export interface SceneEdge {
  source: string;
  target: string;
  points: number[][];
  kind: EdgeKind;
  width: number;
  label: string | null;
  count: number;
  reversed: boolean; // drawn against the rank direction: a back edge of a cycle
}

export interface Scene {
  graph: GraphRef;
  expanded: string[];
  nodes: SceneNode[];
  edges: SceneEdge[];
  width: number;
  height: number;
  stats: Record<string, unknown>;
  version: number;
}

export interface SceneDelta {
  graph: GraphRef;
  expanded: string[];
  upserted_nodes: SceneNode[];
  removed_nodes: string[];
  edges: SceneEdge[];
  width: number;
  height: number;
  stats: Record<string, unknown>;
  version: number;
}

export interface Job {
  job_id: string;
  state: JobState;
  stage: string;
  progress: number;
  error: string | null;
  version: number;
}

export interface NodeAttr {
  key: string;
  value?: string; // protobuf text format; absent when elided
  elided_bytes?: number; // the attr's size, when too large to send
}

export interface NodeIo {
  name: string;
  shape: number[] | null; // dims, -1 = unknown
  kind: EdgeKind;
  visible: boolean; // false: an edge to or from an embedding
  count?: number; // groups: base edges in the metaedge
  size?: number; // groups: summed tensor size
}

/** What an op or a group costs (/node with cost=1): a shared parameter counted once, in its first reader's group. */
export interface NodeCost {
  params: number;
  param_bytes: number;
  flops: number; // a multiply-add is 2
  output_bytes: number;
  unknown_ops: number; // ops whose cost the graph does not say (adding 0 to the sums)
  unknown_op_types: Record<string, number>;
}

export interface NodeDetails {
  name: string;
  kind: NodeKind;
  op: string | null;
  device: string | null;
  attrs: NodeAttr[];
  inputs: NodeIo[];
  outputs: NodeIo[];
  cardinality: number;
  series: string | null;
  template: string | null;
  stats: Record<string, unknown> | null;
  inferred: Inferred;
  cost?: NodeCost;
  version: number;
}

export interface SearchHit {
  name: string;
  op: string | null;
  kind: NodeKind;
  ancestors: string[]; // groups holding it, outermost first, root excluded
  label: string; // what it is drawn as (SceneNode.label): its name's last part, or its op type
}

export interface SearchAnswer {
  hits: SearchHit[];
  total: number; // every match seen (all of them when complete)
  complete: boolean; // false: the search stopped at its time budget before the last name
  matches?: string[][]; // pattern search: the ops of each match, in path order; hits[k] is the last of matches[k]
  match_groups?: string[]; // and the groups holding their ops: a closed one is marked
  version: number;
}

export interface UploadAnswer {
  graph: GraphRef;
  ops: number;
  warnings: string[];
  source: string;
  version: number;
}

export interface ErrorAnswer {
  error: string;
  request_id?: string; // a 5xx's id, also in the server's log
  version: number;
}

export type DiffStatus = "same" | "changed" | "added" | "removed";

export interface DiffEntry {
  name: string; // the name in B; for removed nodes the name in A
  status: DiffStatus;
  kind: NodeKind;
  fields: string[]; // op, attrs, shapes, device, inputs, name; groups: contents, name
  old_name: string | null; // the name in A when matched under another name
  anchor: string | null; // removed nodes: the B group that holds their place
}

export interface GraphDiff {
  base: GraphRef; // graph A
  graph: GraphRef; // graph B, the one drawn
  same: boolean;
  added: string[];
  removed: string[];
  changed: string[];
  entries: DiffEntry[];
  counts: Record<string, Record<string, number>>; // {"ops"|"groups": {status: n}}
  matched: Record<string, number>;
  stats: Record<string, unknown>;
  version: number;
}

export type NodeDataAgg = "max" | "mean" | "sum";

export interface NodeDataTag {
  run: string;
  tag: string;
  max_step: number;
  source: string; // "summary", or "upload <filename>" (run "__upload__")
}

export interface NodeDataListing {
  tags: NodeDataTag[];
  version: number;
}

export interface NodeDataColorStop {
  at: number; // a threshold's upper bound, or a gradient stop in 0..1
  color: string;
}

export interface NodeDataEntry {
  name: string;
  value: number | null;
  nonfinite?: string; // "nan" | "inf" | "-inf" when value is null
}

export interface NodeDataPoint {
  step: number;
  value: number | null;
  nonfinite?: string;
}

export interface NodeDataAnswer {
  graph: GraphRef;
  data_run: string;
  data_tag: string;
  step: number;
  steps: number[];
  agg: NodeDataAgg;
  values: Record<string, number>; // shown node -> finite value
  nonfinite: Record<string, string>; // shown node -> "nan" | "inf" | "-inf"
  range: number[] | null; // [min, max] of values
  top: NodeDataEntry[];
  matched: number;
  unmatched: number;
  unmatched_names: string[];
  history: NodeDataPoint[];
  thresholds: NodeDataColorStop[];
  gradient: NodeDataColorStop[];
  version: number;
}
