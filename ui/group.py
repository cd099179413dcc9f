"""A group of components that travels as one value: a frozen dataclass whose fields are components, named as what
they set (a `SamplerSettings` field, a handler's argument). Wired with its components as a set of inputs, gradio
passes `{component: value}`; `read` turns that into `{name: value}`, so no handler counts positions."""

from dataclasses import fields


class Group:
    """Mixed into a frozen dataclass of components."""

    def __iter__(self):
        return (getattr(self, f.name) for f in fields(self))

    def components(self) -> set:
        return set(self)

    def read(self, given: dict) -> dict:
        """The group's values by name, from gradio's {component: value}."""
        return {f.name: given[getattr(self, f.name)] for f in fields(self)}


def controls_from(cls, page, given: dict):
    """A handler's controls (`cls`, a dataclass) from gradio's {component: value}: each field read from the page's
    component of the same name, a Group (the sampler knobs) as its values by name."""
    values = {}
    for f in fields(cls):
        component = getattr(page, f.name)
        values[f.name] = component.read(given) if isinstance(component, Group) else given[component]
    return cls(**values)
