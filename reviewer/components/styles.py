"""CSS for the HTML panes. Panel renders each pane in a shadow root, so page-wide CSS does not reach
inside: panes take these as `stylesheets`."""

PANE_CSS = """
.sr-meta-table { border-collapse: collapse; width: 100%; font-size: 13px; }
.sr-meta-table th { text-align: left; font-weight: 600; padding: 2px 8px 2px 0; color: #444; white-space: nowrap; }
.sr-meta-table td { padding: 2px 0; font-family: ui-monospace, monospace; word-break: break-all; user-select: all; }
.sr-header { font-size: 11px; line-height: 1.3; }
.sr-tool-call { white-space: pre-wrap; word-break: break-word; background: #f6f6f6; padding: 4px 6px;
                border-radius: 4px; font-size: 12px; }
.sr-step-text { font-size: 13px; line-height: 1.4; }
.sr-error-text { color: #a94442; }
.sr-answer th { text-align: left; padding-right: 8px; }
.sr-evidence { margin: 2px 0 2px 16px; font-size: 12px; }
.sr-rubric-table th { padding-right: 6px; vertical-align: top; }
.sr-rubric-table td { font-size: 12px; }
.sr-rubric-current { background: #fff3cd; }
.sr-help table th { text-align: left; padding-right: 12px; }
.sr-data-table { border-collapse: collapse; font-size: 13px; }
.sr-data-table th { text-align: left; font-weight: 600; padding: 3px 8px; border-bottom: 1px solid #ccc; }
.sr-data-table td { text-align: left; padding: 2px 8px; border-bottom: 1px solid #eee; white-space: nowrap; }
kbd { border: 1px solid #bbb; border-radius: 3px; padding: 0 4px; background: #fafafa; }
"""
STYLESHEETS = [PANE_CSS]
