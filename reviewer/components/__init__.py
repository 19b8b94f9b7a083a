"""Small `pn.viewable.Viewer` components: state in params, no SQL, no astronomy maths."""
