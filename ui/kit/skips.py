"""An output an answer leaves as it is (`gr.skip()`), left as it is on the server too.

gradio 6 handles an output answered with `gr.skip()` (an "update" with nothing in it) as a change of the component's
properties: it builds a new copy of the component from its constructor's arguments, keeps it in the session's state,
copies its config, and then sends the browser the empty update (Blocks.postprocess_data). A Step leaves two panels
as they are (the lens while closed, each strategy alone while off screen), and a keyed answer (`{component: value}`)
that names fewer than the event's outputs is turned into skips for the rest: each cost the server's one interpreter
a component built and configured at every click (see `leave_skips` for what it measured).

`leave_skips(demo)` hands gradio those outputs as ones it has nothing to do for (its marker for an output of a
finished iterator, which it passes over) and puts gradio's empty update for each back in the answer, made from the
output itself: the browser gets what it got.
"""

from gradio import components
from gradio.blocks import convert_component_dict_to_list, postprocess_update_dict
from gradio.helpers import skip

NOTHING = components._Keywords.FINISHED_ITERATING  # gradio passes over an output with this value: None in its answer


def _skipped(value) -> bool:
    return isinstance(value, dict) and value == skip()


def leave_skips(demo):
    """Make `demo` pass over the outputs an answer skips (see the module). Returns `demo`."""
    postprocess = demo.postprocess_data

    async def postprocess_data(block_fn, predictions, state):
        outputs = list(block_fn.outputs)
        if block_fn.is_validator_function or block_fn.batch:
            return await postprocess(block_fn, predictions, state)
        # the answer as gradio reads it, one value per output (Blocks.postprocess_data's first lines)
        values = predictions
        if _skipped(values) and len(outputs) > 1:
            values = [skip() for _ in outputs]
        if isinstance(values, dict) and values:
            values = convert_component_dict_to_list(outputs, values)
        if len(outputs) == 1:
            values = [values]
        if not isinstance(values, (list, tuple)) or len(values) != len(outputs):
            return await postprocess(block_fn, predictions, state)  # gradio says what is wrong with it
        left = {i for i, (block, value) in enumerate(zip(outputs, values)) if _skipped(value) and not block.stateful}
        if not left:
            return await postprocess(block_fn, predictions, state)
        given = [NOTHING if i in left else value for i, value in enumerate(values)]
        answer = await postprocess(block_fn, given[0] if len(outputs) == 1 else given, state)
        # gradio's own empty update for the output, made from the output itself rather than a new copy of it
        empty = {i: postprocess_update_dict(outputs[i], skip(), block_fn.postprocess) for i in left}
        return [empty.get(i, value) for i, value in enumerate(answer)]

    demo.postprocess_data = postprocess_data
    return demo
