"""The review screen: queue + metadata | spectrum, step text beside its render, player strip |
verdict and rubric. Placement only: every component binds to the one ReviewState."""
from __future__ import annotations

import panel as pn

from reviewer.components.annotation_form import AnnotationForm
from reviewer.components.candidates_view import CandidatesView
from reviewer.components.conflicts import ConflictQueue
from reviewer.components.controls import Controls
from reviewer.components.curation_board import CurationBoard
from reviewer.components.feedback import AckView, OthersView
from reviewer.components.keyboard import KEY_MAP, Keyboard
from reviewer.components.metadata import MetadataPanel
from reviewer.components.next_tick import every
from reviewer.components.panes import TextHTML
from reviewer.components.preference_form import PreferenceForm
from reviewer.components.queue import QueueView
from reviewer.components.review_form import ReviewForm
from reviewer.components.safe_text import escape
from reviewer.components.same_object import SameObjectPanel
from reviewer.components.spectrum_list import SpectrumListView
from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.components.stats_panel import StatsPanel
from reviewer.components.step_judgment import StepJudgmentForm
from reviewer.components.step_render import StepRender
from reviewer.components.step_view import StepView
from reviewer.components.styles import STYLESHEETS
from reviewer.components.trajectory_player import TrajectoryPlayer, Transcript
from reviewer.components.vi_form import VIForm
from reviewer.review_state import ReviewState
from reviewer.services.labels import LabelRefused, check_name


def keyboard_for(state: ReviewState, plot=None, render: StepRender | None = None,
                 step_judgment: StepJudgmentForm | None = None) -> Keyboard:
    keys = Keyboard()
    keys.on_active(state.activity.report)  # time on item (reviewer.activity)
    if render is not None:  # the agent's render at full size, and back (f is the browser's own: keyboard.py)
        keys.on("v", render.toggle_full_size)
        keys.on("Escape", render.close)
    if plot is not None:
        fit_plot_to_window(keys, plot)
    if step_judgment is not None:  # the step on screen: correct, partly, incorrect (its tags: the boxes)
        for key, judgment in (("c", "correct"), ("p", "partly"), ("x", "incorrect")):
            keys.on(key, lambda j=judgment: step_judgment.judge(j))
    if plot is not None:  # zoom about the centre of the view: + (or =) in, - out
        for key, factor in (("+", 0.5), ("=", 0.5), ("-", 2.0)):
            keys.on(key, lambda f=factor: plot.zoom_by(f))
    writer = state.writer
    actions = {"n": lambda: state.step_item(+1), "b": lambda: state.step_item(-1), "j": state.next_step,
               "k": state.previous_step, "a": lambda: writer.save("verdict", action="approve"),
               "o": lambda: writer.save("verdict", action="override"), "r": lambda: writer.save("verdict", action="reject"),
               "u": writer.undo, "?": state.toggle_help}
    # a first look on a yes/no task (Shift: a first answer is never one key away from a verdict key)
    for key, answer in (("Y", "YES"), ("N", "NO")):
        actions[key] = lambda answer=answer: writer.save("first_look", label={"answer": answer})
    # nudge the frame's z, as Marz and prospect do: [ ] by 50 km/s, { } by 500 km/s
    for key, dv in (("[", -50.0), ("]", 50.0), ("{", -500.0), ("}", 500.0)):
        actions[key] = lambda dv=dv: state.nudge_z(dv)
    for key, action in actions.items():
        keys.on(key, action)
    for score in range(6):
        keys.on(str(score), lambda s=score: writer.save("score", score=s))
    return keys


def help_pane(state: ReviewState) -> pn.pane.HTML:
    rows = "".join(f"<tr><th><kbd>{escape(k)}</kbd></th><td>{escape(v)}</td></tr>" for k, v in KEY_MAP)
    return pn.pane.HTML("<div class='sr-help'><h3>Keyboard</h3><table>" + rows + "</table>"
                        "<p>Keys never fire while you type in a text field.</p></div>",
                        visible=state.param.show_help, css_classes=["sr-help-pane"], stylesheets=STYLESHEETS)


def identity_prompt(state: ReviewState):
    """Asked once per browser session when no login or ?reviewer= gave a name. Under a login it is not
    in the page at all: the login is the reviewer."""
    if state.login:
        return None
    name = pn.widgets.TextInput(placeholder="Your name", css_classes=["sr-reviewer-name"], width=220, max_length=64)
    start = pn.widgets.Button(label="Start reviewing", color="primary", css_classes=["sr-reviewer-start"],
                              description="Review under this name (kept in the address and in this browser).")
    why = TextHTML("", css_classes=["sr-identity-error"])
    box = pn.Column(pn.pane.HTML("<b>Who is reviewing?</b> Your labels are saved under this name."),
                    pn.Row(name, start), why, css_classes=["sr-identity"], visible=not state.reviewer)

    def accept(_=None):
        try:
            state.reviewer = check_name(name.value)
        except LabelRefused as err:
            why.object = f"<span>{escape(str(err))}</span>"
            return
        why.object = ""
        box.visible = False

    start.on_click(accept)
    name.param.watch(accept, "enter_pressed")
    return box


class LazyTab(pn.Column):
    """A tab whose component is built the first time the tab is opened (a page load builds only what
    is on screen), or earlier by `prepare`, and refreshed, when it has a `refresh`, each time it is opened."""

    def __init__(self, build, refresh_on_open: bool = True, **params):
        super().__init__(sizing_mode="stretch_width", **params)
        self._build, self._refresh_on_open, self.component = build, refresh_on_open, None

    def prepare(self) -> None:
        """Build the component and put it in the (hidden) tab before anyone opens it, filled with what it
        can show without computing (its `prepare`): opening it then only refreshes what changed."""
        if self.component is not None:
            return
        self.component = self._build()
        getattr(self.component, "prepare", lambda: None)()
        self.objects = [self.component]

    def open(self):
        built = self.component is not None
        if not built:
            self.component = self._build()
        refresh = getattr(self.component, "refresh", None) or getattr(self.component, "build", None)
        if refresh and self._refresh_on_open:
            refresh()
        if not built:
            # attached once filled: a table whose rows arrived right after its model sometimes drew
            # none of them (Tabulator, header only), and the rows are not sent twice
            self.objects = [self.component]


def lazy_tabs(views: dict, *tabs: tuple, **params) -> pn.Tabs:
    """Tabs of (title, view name, component or builder); builders become LazyTabs, opened on first view."""
    objects = []
    for title, name, what in tabs:
        if callable(what) and not isinstance(what, pn.viewable.Viewable | pn.viewable.Viewer):
            what = LazyTab(what)
        else:
            views[name] = what
        objects.append((title, what))
    widget = pn.Tabs(*objects, dynamic=False, sizing_mode="stretch_width", **params)

    def on_tab(event):
        tab = widget.objects[event.new]
        if isinstance(tab, LazyTab):
            tab.open()
            views[tabs[event.new][1]] = tab.component

    widget.param.watch(on_tab, "active")
    return widget


# The Stats tab is built and sent to the browser (hidden) this long after a served page has loaded: its
# six plots cost ~0.25 s of the server and 0.3-0.5 s of the browser, which the opening then does not wait
# for; opened before, it takes 0.9-1.6 s at any size (docs/benchmarks.md, issue 22). Not at once: the
# page's own first drawing comes first. Soon after: a reviewer looks at the first spectrum for longer.
PREPARE_AFTER_LOAD_MS = 500


def prepare_after_load(tab: pn.viewable.Viewable) -> None:
    """In a served page, `tab.prepare()` once, PREPARE_AFTER_LOAD_MS after the browser has shown the page
    (unless it was opened before)."""
    doc = pn.state.curdoc
    if isinstance(tab, LazyTab) and doc is not None and doc.session_context is not None:
        pn.state.onload(lambda: every(PREPARE_AFTER_LOAD_MS, tab.prepare, count=1))


# The spectrum gets the room (prospect's habit): the plot's height follows the window, less the chrome
# above it (header, tabs) and under it (the player's controls and the first rows of the step strip);
# in the full-window mode (`f`) less the header and tabs only. The step's text follows under the
# player (the main column scrolls); the agent's render sits beside the verdict.
PLOT_HEIGHT_PX = 380
PLOT_CHROME_PX = 300
FULL_WINDOW_CHROME_PX = 140


def fit_plot_to_window(keys: Keyboard, plot: SpectrumPlot) -> None:
    """The plot's height from the browser window's (the Keyboard reports it, and the full-window mode)."""
    def fit(*_):
        height = keys.window_size[1]
        if height:
            chrome = FULL_WINDOW_CHROME_PX if keys.full_window else PLOT_CHROME_PX
            plot.set_height(max(PLOT_HEIGHT_PX, height - chrome))

    keys.param.watch(fit, ["window_size", "full_window"])


def main_area(state: ReviewState, plot: SpectrumPlot, views: dict) -> pn.Tabs:
    views.update(player=TrajectoryPlayer(state=state), step=StepView(state=state),
                 step_judgment=StepJudgmentForm(state=state))
    # the judgment of the step on screen under its text (process supervision: issue 47, item 4)
    review = pn.Column(*(c for c in (identity_prompt(state), help_pane(state)) if c is not None),
                       plot, views["player"], views["step"], views["step_judgment"],
                       sizing_mode="stretch_width", css_classes=["sr-review-main"])
    specs = [("Review", "review", review), ("Transcript", "transcript", lambda: Transcript(state=state)),
             ("Conflicts", "conflicts", lambda: ConflictQueue(state=state)),
             ("Curation", "curation", lambda: CurationBoard(state=state)),
             ("Stats", "stats", lambda: StatsPanel(state=state))]
    tabs = lazy_tabs(views, *specs, css_classes=["sr-main-tabs"])
    prepare_after_load(tabs.objects[[name for _, name, _ in specs].index("stats")])
    state.main_tab = "review"
    tabs.param.watch(lambda e: setattr(state, "main_tab", specs[e.new][1]), "active")
    state.param.watch(lambda _: setattr(tabs, "active", 0), "item")  # opening an item shows it
    return tabs


def right_area(state: ReviewState, plot: SpectrumPlot, views: dict) -> pn.Column:
    views.update(ack=AckView(state=state), form=ReviewForm(state=state), others=OthersView(state=state),
                 render=StepRender(state=state))
    # what the agent saw, then the verdict on it: both on the first screen
    review = pn.Column(views["render"], views["form"], views["others"], sizing_mode="stretch_width")

    def notes():
        views.update(note=AnnotationForm(state=state), preference=PreferenceForm(state=state))
        return pn.Column(views["note"], pn.pane.HTML("<b>Preference</b>"), views["preference"],
                         sizing_mode="stretch_width")

    tabs = lazy_tabs(views, ("Review", "review_form", review), ("Note", "notes", notes),
                     ("View", "controls", lambda: Controls(plot=plot, state=state)),
                     ("z", "candidates", lambda: CandidatesView(plot=plot, state=state)),
                     ("VI", "vi", lambda: VIForm(state=state)), css_classes=["sr-right-tabs"])
    # the acknowledgement stays in sight whichever tab the reviewer is in
    return pn.Column(views["ack"], tabs, sizing_mode="stretch_width")


def left_area(state: ReviewState, views: dict) -> pn.Column:
    views.update(queue=QueueView(state=state), metadata=MetadataPanel(state=state),
                 same_object=SameObjectPanel(state=state))
    tabs = lazy_tabs(views, ("Queue", "queue", views["queue"]),
                     ("Spectra", "spectra", lambda: SpectrumListView(state=state)))
    # cards whose headings stay on the first screen under the queue and its filters: the reviewer
    # opens or folds them, and the sidebar (not the page) scrolls
    meta = pn.Card(views["metadata"], title="Metadata", collapsed=False, sizing_mode="stretch_width",
                   css_classes=["sr-metadata-card"])
    same = pn.Card(views["same_object"], title="Same object", collapsed=False, sizing_mode="stretch_width",
                   css_classes=["sr-same-object-card"])
    return pn.Column(tabs, meta, same, sizing_mode="stretch_width")
