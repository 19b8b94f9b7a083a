"""Reproduce any render of a vet trajectory from the spectrum and the recorded call.

Deferred runs store only the call; this is what the reviewer (or an export) uses to make the
image when someone opens the step. Eager runs store the PNG too; both come from the same code.
"""
from __future__ import annotations

from agents.tools.zoom import SpectralVisualizationTool
from agents.trajectory import Step, Trajectory


def tool_for(traj: Trajectory, spectrum) -> SpectralVisualizationTool:
    prompt = next((s for s in traj.steps if s.kind == "prompt"), None)
    state = (prompt.data.get("tool_state") if prompt else None) or {}
    return SpectralVisualizationTool.from_spectrum(spectrum, redshift=state.get("redshift"),
                                                   title=state.get("title", "Spectrum"))


def render_step(traj: Trajectory, step: Step, spectrum, tool: SpectralVisualizationTool | None = None, *,
                marks=None) -> bytes | None:
    """PNG of a prompt (overview) or successful tool_result step; None for steps without an image.

    `marks` (a reviewer's copy, never what the agent saw): lines to mark, (label, x) in the tool's
    plotted wavelengths (rest frame when the tool has a redshift), most important first."""
    if step.kind not in ("prompt", "tool_result") or step.is_error:
        return None
    tool = tool or tool_for(traj, spectrum)
    args = step.tool_args or {}
    return tool(args.get("wavelength_range"), args.get("label"), render=True, marks=marks).png


def fill_images(traj: Trajectory, spectrum) -> int:
    """Render every deferred image into traj.images and set the steps' image_sha; returns the count."""
    tool = tool_for(traj, spectrum)
    made = 0
    for step in traj.steps:
        if step.image_sha is None and step.data.get("deferred"):
            png = render_step(traj, step, spectrum, tool)
            if png is not None:
                step.image_sha = traj.add_image(png)
                made += 1
    return made
