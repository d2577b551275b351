"""Split a joint forward+backward graph into a forward graph and a backward graph.

The joint graph's placeholders are the primals followed by the tangents; its output is the
forward outputs followed by the input gradients.  A node belongs to the forward when it does
not depend on any tangent; the forward values the backward reads are the saved values.
"""

from __future__ import annotations

from torch.fx import Graph, GraphModule, Node


def _tangent_dependent(graph: Graph, tangents: set[Node]) -> set[Node]:
    dependent: set[Node] = set(tangents)
    for node in graph.nodes:
        if node.op != "output" and any(a in dependent for a in node.all_input_nodes):
            dependent.add(node)
    return dependent


def default_partition(joint_module: GraphModule, _joint_inputs: object = None, *,
                      num_fwd_outputs: int, num_primals: int | None = None
                      ) -> tuple[GraphModule, GraphModule]:
    """Forward = every node not depending on a tangent; saved = the forward nodes the backward
    reads.  Returns ``(forward_module, backward_module)``: the forward returns its outputs then
    the saved values, the backward takes the saved values then the tangents."""
    graph = joint_module.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if num_primals is None:
        num_primals = len(placeholders) - num_fwd_outputs
    primals, tangents = placeholders[:num_primals], placeholders[num_primals:]
    output = next(n for n in graph.nodes if n.op == "output")
    outs = list(output.args[0])
    fw_outs, grads = outs[:num_fwd_outputs], outs[num_fwd_outputs:]
    backward_nodes = _tangent_dependent(graph, set(tangents))
    saved: list[Node] = []
    for node in graph.nodes:
        if node in backward_nodes or node.op == "output":
            continue
        if any(user in backward_nodes for user in node.users) or node in grads:
            saved.append(node)

    fw_graph = Graph()
    env: dict[Node, Node] = {}
    for node in graph.nodes:
        if node.op == "output" or node in backward_nodes:
            continue
        env[node] = fw_graph.node_copy(node, lambda n: env[n])
    fw_graph.output(tuple(env[n] if isinstance(n, Node) else n for n in fw_outs)
                    + tuple(env[n] for n in saved))

    bw_graph = Graph()
    benv: dict[Node, Node] = {}
    for node in saved:
        benv[node] = bw_graph.placeholder(node.name)
    for node in tangents:
        benv[node] = bw_graph.placeholder(node.name)
    for node in graph.nodes:
        if node in backward_nodes and node.op != "placeholder":
            benv[node] = bw_graph.node_copy(node, lambda n: benv[n])
    bw_graph.output(tuple(benv[n] if isinstance(n, Node) else n for n in grads))
    del primals
    return GraphModule(joint_module, fw_graph), GraphModule(joint_module, bw_graph)


def min_cut_rematerialization_partition(joint_module: GraphModule, _joint_inputs: object = None,
                                        *, num_fwd_outputs: int, num_primals: int | None = None
                                        ) -> tuple[GraphModule, GraphModule]:
    """Not yet a min-cut: falls back to :func:`default_partition` (same contract)."""
    return default_partition(joint_module, _joint_inputs, num_fwd_outputs=num_fwd_outputs,
                             num_primals=num_primals)
