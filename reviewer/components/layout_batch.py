"""One BokehJS layout pass per server message, not one per changed widget.

BokehJS re-computes the layout of a whole page area (measuring every child, the spectrum plot
included) each time one widget re-renders or changes visibility, synchronously, while it applies a
document patch. An item switch (`n`) arrives as one patch (see keyboard.py) that changes a dozen
widgets: the verdict buttons' labels, the override inputs shown for a vet or a verify task, the
step strip. Measured in Chromium: 5-8 full layouts of an area per switch, 30-50 ms of a ~100 ms
client-side budget. This component wraps the document's `apply_json_patch`: from the start of a
patch until the next animation frame (which runs before the browser paints, and so also covers the
widgets that re-render a few promises after the patch, such as a button with a new label), a layout
request that reaches an area's root only marks that root; in that animation frame each marked root
is laid out once. Values, views and the order of model changes are untouched; only repeated layout
passes are merged, and nothing is painted before its layout. (A hidden browser tab runs no animation
frames: its layout waits until it is shown again, as its painting does.)

It relies on three BokehJS 3 methods of LayoutDOMView (`invalidate_layout`, `compute_layout`,
`update_layout`) and on `Document.apply_json_patch`. When they are not found (another BokehJS), it
does nothing and the page lays out as before, only slower; `installed` (and, in the page,
`window.__srLayoutBatch.installed`) says which happened.
"""
from __future__ import annotations

import param
from panel.custom import JSComponent


class LayoutBatch(JSComponent):
    """Invisible; put it once in the page (the header)."""

    installed = param.Boolean(default=False, doc="set by the browser once the batching is in place")

    _esm = """
    function layoutDomPrototype(view) {
      // the class whose own methods include the whole layout protocol: BokehJS's LayoutDOMView
      for (let p = Object.getPrototypeOf(view); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
        const own = (name) => Object.prototype.hasOwnProperty.call(p, name) && typeof p[name] === "function";
        if (own("invalidate_layout") && own("compute_layout") && own("update_layout") && own("invalidate_render")) {
          return p;
        }
      }
      return null;
    }

    // one state for the page: the prototype is shared by every document on it
    const batch = window.__srLayoutBatch ??= {open: false, pending: new Map(), protos: new WeakSet(), docs: new WeakSet()};

    function flush() {
      batch.open = false;
      const roots = [...batch.pending];  // area root view -> whether its layout must be updated, not only computed
      batch.pending.clear();
      for (const [root, update] of roots) {
        try {
          if (update) root.invalidate_layout(); else root.compute_layout();
        } catch (err) {
          console.warn("layout after a patch failed", err);
        }
      }
    }

    function install(doc, proto) {
      if (!batch.protos.has(proto)) {
        batch.protos.add(proto);
        const LayoutDOMView = proto.constructor;
        const invalidate = proto.invalidate_layout, compute = proto.compute_layout;
        const isRoot = (view) => !(view.parent instanceof LayoutDOMView);
        proto.invalidate_layout = function () {
          if (batch.open && isRoot(this)) { batch.pending.set(this, true); return; }
          return invalidate.call(this);
        };
        proto.compute_layout = function () {
          if (batch.open && isRoot(this)) { if (!batch.pending.has(this)) batch.pending.set(this, false); return; }
          return compute.call(this);
        };
      }
      batch.installed = true;
      if (!batch.docs.has(doc)) {
        batch.docs.add(doc);
        const apply = doc.apply_json_patch;
        doc.apply_json_patch = function (...args) {
          if (!batch.open) {
            batch.open = true;
            requestAnimationFrame(flush);
          }
          return apply.apply(this, args);
        };
      }
    }

    export function render({ model, view }) {
      const doc = view.model.document;
      const proto = layoutDomPrototype(view);
      if (doc != null && proto != null && typeof doc.apply_json_patch === "function") {
        install(doc, proto);
        model.installed = true;
      }
      const marker = document.createElement("span");
      marker.className = "sr-layout-batch";
      marker.style.display = "none";
      return marker;
    }
    """
