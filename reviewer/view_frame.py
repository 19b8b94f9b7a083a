"""How the spectrum on screen is looked at: one small state the plot, the View and z tabs and the
exports read (the plot reads it, it does not copy it). No widgets, no store.

Opening an item resets the frame to the item's (`ReviewState.open_item`); the reviewer's choices that
hold from item to item (hidden arms, following the agent's zoom) are kept, as prospect keeps them.
"""
from __future__ import annotations

import param


class Frame(param.Parameterized):
    z = param.Number(default=0.0, bounds=(-0.01, 12), doc="redshift of the rest frame and the line markers")
    rest_frame = param.Boolean(default=False, doc="wavelengths divided by (1+z)")
    hidden_arms = param.List(default=[], doc="spectrograph arms not drawn (DESI B/R/Z, LAMOST MRS B/R): the "
                                             "reviewer's choice, kept from item to item as prospect keeps it")
    follow_zoom = param.Boolean(default=True, doc="the plot's x range follows the agent's zoom at each step "
                                "(the reviewer's choice, kept from item to item)")
    focus_window = param.Tuple(default=None, length=2, allow_None=True,
                               doc="a window to shade instead of the agent's zoom (a claim's measured region)")
    candidate = param.Dict(default=None, allow_None=True,
                           doc="the redshift candidate the reviewer chose (reviewer.services.candidates): its z sets "
                               "the frame, its class and z the model drawn over the data")
    overlays = param.List(default=[], doc="[(spectrum_id, colour)]: other spectra of the item's object drawn over "
                                          "the plot, normalised to it (the Same-object panel chooses them)")

    def scale(self) -> float:
        """Axis wavelength per observed wavelength: 1/(1+z) in the rest frame, else 1."""
        return 1.0 / (1.0 + float(self.z)) if self.rest_frame else 1.0

    def model_of(self) -> dict | None:
        """{class, z} of the template the plot draws: the chosen candidate's, when it names a class."""
        chosen = self.candidate
        return {"class": chosen["class"], "z": float(chosen["z"])} if chosen and chosen.get("class") else None

    def for_new_item(self, z: float, same_spectrum: bool) -> dict:
        """The changes that open an item: its z, no chosen candidate or claim window; overlays kept only
        on the same spectrum (they were chosen for it)."""
        return {"z": z, "focus_window": None, "candidate": None, "overlays": self.overlays if same_spectrum else []}
