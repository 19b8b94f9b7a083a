"""JavaScript probes into the page's Bokeh documents (BokehJS is minified: match on model type names)."""

MODELS = """
const models = [];
for (const doc of (window.Bokeh ? Bokeh.documents : [])) {
  models.push(...(doc._all_models ? doc._all_models.values() : doc.all_models));
}
"""

# [start, end] of the wavelength range: the Range1d with the largest values (Angstrom)
X_RANGE_JS = "() => {" + MODELS + """
  const ranges = models.filter(m => m.type === 'Range1d');
  ranges.sort((a, b) => Math.abs(b.end) - Math.abs(a.end));
  return ranges.length ? [ranges[0].start, ranges[0].end] : null;
}"""

# a column of one of the plot's sources by member name ('flux', 'sky', 'labels', ...), as a plain array
SOURCE_COLUMN_JS = "([member, column]) => {" + MODELS + """
  const m = models.find(m => m.type === 'ColumnDataSource' && m.name === 'spectrum-' + member);
  return m && m.data[column] ? Array.from(m.data[column]) : null;
}"""

# the agent-zoom shading: [left, right] or null when hidden
SHADE_JS = "() => {" + MODELS + """
  const box = models.find(m => m.type === 'BoxAnnotation' && m.name === 'agent-zoom');
  if (!box) return 'absent';
  return box.visible ? [box.left, box.right] : null;
}"""

# x of a line label by its text, e.g. 'H-alpha'
LABEL_X_JS = "(name) => {" + MODELS + """
  for (const m of models) {
    if (m.type !== 'ColumnDataSource' || !m.data || !m.data.text) continue;
    const i = Array.from(m.data.text).indexOf(name);
    if (i >= 0) return m.data.x[i];
  }
  return null;
}"""

# the wavelength of the brightest flux pixel within +-half of x (on the drawn axis)
PEAK_NEAR_JS = "([x, half]) => {" + MODELS + """
  const src = models.filter(m => m.type === 'ColumnDataSource' && m.data && m.data.wave && m.data.flux)
                    .sort((a, b) => b.data.wave.length - a.data.wave.length)[0];
  if (!src) return null;
  let best = null, at = null;
  for (let i = 0; i < src.data.wave.length; i++) {
    const w = src.data.wave[i], f = src.data.flux[i];
    if (Math.abs(w - x) <= half && Number.isFinite(f) && (best === null || f > best)) { best = f; at = w; }
  }
  return at;
}"""

AXIS_LABELS_JS = "() => {" + MODELS + """
  return models.filter(m => m.type === 'LinearAxis' && m.axis_label).map(m => m.axis_label);
}"""

# sources drawn by the Stats tab's plots that hold data: counts per column name
STATS_GLYPHS_JS = "() => {" + MODELS + """
  const out = {};
  for (const m of models) {
    if (m.type !== 'GlyphRenderer' || !m.data_source || !m.data_source.data) continue;
    const data = m.data_source.data;
    const n = Math.max(0, ...Object.values(data).map(v => (v && v.length) || 0));
    const kind = m.glyph ? m.glyph.type : '?';
    if (n > 0) out[kind] = (out[kind] || 0) + 1;
  }
  return out;
}"""


def _figure_glyphs_js(count: str) -> str:
    """Per glyph type of the figure whose title is `title`: `count` (JS, of n: the renderer's rows)
    summed over its renderers holding data."""
    return "(title) => {" + MODELS + """
  const out = {};
  for (const fig of models) {
    if (!fig.renderers || !fig.title || fig.title.text !== title) continue;
    for (const r of fig.renderers) {
      if (r.type !== 'GlyphRenderer' || !r.data_source || !r.data_source.data) continue;
      const n = Math.max(0, ...Object.values(r.data_source.data).map(v => (v && v.length) || 0));
      const kind = r.glyph ? r.glyph.type : '?';
      if (n > 0) out[kind] = (out[kind] || 0) + """ + count + """;
    }
  }
  return out;
}"""


# the glyph renderers holding data in the figure whose title is `title`, per glyph type
FIGURE_GLYPHS_JS = _figure_glyphs_js("1")
# their rows of data, per glyph type (a multi-line: its lines)
FIGURE_ROWS_JS = _figure_glyphs_js("n")

# whether the page holds a figure titled `title` (drawn or not: a hidden tab's too)
FIGURE_PRESENT_JS = "(title) => {" + MODELS + """
  return models.some(m => m.title && m.title.text === title);
}"""

# titles of the figures that draw a legend inside their frame (over the data)
LEGENDS_OVER_DATA_JS = "() => {" + MODELS + """
  return models.filter(f => f.title && f.center && f.center.some(r => r.type === 'Legend'))
               .map(f => f.title.text);
}"""
