#!/usr/bin/env python3
"""Variants of kbench's profile page for `bench/flame/main.go -page DIR`.

    python3 bench/flame/pages.py http://127.0.0.1:8080/profiles/1 OUT

saves the page (with its static files) from a running kbench and writes one
directory per variant under OUT. The benchmark counts a page as drawn as it
does kbench's (the flamegraph:rendered event); a variant without the graph's
script fires that event itself where the script was. The variants:

  served      the page as kbench serves it (its CSP aside: a plain file
              server sends none)
  inline      flamegraph.js inline in the page instead of loaded from the cache
  shell       no graph and no script: the page's shell, signalled where the
              graph's script was
  shell-tmpl  the shell, the deferred parts (class fp-later) in <template>
              elements: parsed, never styled or laid out
  mini        the graph drawn by pages/mini.js, a minimal canvas drawer
  mini-dom    the same as absolutely positioned boxes
  mini-csp    the same boxes made as kbench's Content-Security-Policy would
              allow: createElement, a class and the CSSOM, no style
              attributes in markup
  mini-ext    mini-csp's script as a file from the cache, not inline
  notext      the page as served, its flamegraph.js drawing no labels (the
              canvas's fillText and its font measurement left out)
  mini-tmpl   mini with the deferred parts in <template> elements
  ssr         the graph as boxes in the page's HTML (positions in percent
              of the graph's width, so no script is needed to draw it),
              flamegraph.js loaded after the first frame

Then, for example (one input, since the pages are of one profile):

    ROUNDS=21 VARIANTS=0 MODES=warm TRACE=0 \\
      INPUTS=../shared/public-data/java-netty-collapsed.txt \\
      bash bench/flame/run.sh -page OUT/served -page OUT/mini ...
"""
import json
import os
import re
import shutil
import sys
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

DRAWN = ('<script>(function(){var el=document.getElementById("flamegraph");el.setAttribute("data-rendered","true");'
         'el.dispatchEvent(new CustomEvent("flamegraph:rendered",{bubbles:true}));})();</script>')

# LATER_SCRIPT loads the graph's script after the first frame.
LATER_SCRIPT = ('<script>requestAnimationFrame(function(){setTimeout(function(){var s=document.createElement("script");'
                's.src="%s";document.body.appendChild(s);},0);});</script>')

# The deferred parts of the profile page: (where one starts, where it ends,
# whether the end marker belongs to it).
LATER = [
    ('<div class="profile-links fp-later">', '\n\n<section aria-labelledby="flamegraph-heading">', False),
    ('<div class="fg-filters-slot fp-later">', '<nav class="fg-viewbar fp-later"></nav>', True),
    ('<form class="fg-toolbar fp-later"', '</form>', True),
    ('<p class="hint fp-later">', '</p>', True),
    ('<section class="fp-later" aria-labelledby="write-paths-heading">', '</section>', True),
]


def fetch(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


def boxes(page):
    """The first view's frames as positioned boxes, from the inline rows."""
    m = re.search(r'<script type="application/json" id="flamegraph-data">(.*?)</script>', page, re.S)
    if not m:
        sys.exit('the page has no inline rows')
    rows = json.loads(m.group(1))['rows']
    levels, names, stride = rows['levels'], rows['names'], rows['stride']
    total = float(levels[0][1])

    def colour(name):
        h = 0x811c9dc5
        for c in name.encode('utf-16-le')[::2]:
            h = ((h ^ c) * 0x01000193) & 0xffffffff
        return 'hsl(%d,45%%,%d%%)' % (150 + h % 180, 62 + (h >> 9) % 14)

    out = ['<div class="fg-first" style="position:relative;height:%dpx">' % (len(levels) * 18)]
    for d, lv in enumerate(levels):
        x = 0
        for j in range(0, len(lv), stride):
            x += lv[j]
            w = lv[j + 1]
            ni = lv[j + stride - 1]
            left, width = x / total * 100, w / total * 100
            x += w
            name = names[ni] if ni >= 0 else ''
            fill = colour(name) if ni >= 0 else '#e4e7eb'
            label = name.replace('&', '&amp;').replace('<', '&lt;')
            out.append('<div style="left:%.4f%%;width:calc(%.4f%% - 1px);top:%dpx;background:%s">%s</div>' % (left, width, d * 18, fill, label))
    out.append('</div>')
    css = ('<style>.fg-first>div{position:absolute;height:17px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;'
           'padding:0 4px;font:12px/17px ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace}</style>')
    return css + ''.join(out)


# CSP_BOXES: the rules of mini.js's "dom-csp" boxes, added to the page's
# inline style sheet (kbench would carry them in profile-first.css).
CSP_BOXES = ('.mini-layer{position:relative;overflow:hidden}'
             '.mini-box{position:absolute;overflow:hidden;white-space:nowrap;padding-left:4px;height:17px;line-height:17px;'
             'color:#1b1f24;font:12px ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace}')

# NOTEXT: flamegraph.js's label drawing and the font measurement before
# it, each replaced by what leaves the frames' boxes as they are.
NOTEXT = [
    ("ctx.fillText(label, Math.max(px, 0) + PAD, y + ROW / 2);", "void label;"),
    ("if (!this.charW) { this.charW = ctx.measureText('MMMMMMMMMM').width / 10 || 7; }", "this.charW = 7.2;"),
]


def notext(script):
    for old, new in NOTEXT:
        if script.count(old) != 1:
            sys.exit('flamegraph.js changed: cannot make the notext variant (%r)' % old)
        script = script.replace(old, new)
    return script


def templated(page):
    for start, end, inclusive in LATER:
        a = page.find(start)
        if a < 0:
            continue  # a part this profile's page does not have
        b = page.index(end, a) + (len(end) if inclusive else 0)
        page = page[:a] + '<template>' + page[a:b] + '</template>' + page[b:]
    return page


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    url, out = sys.argv[1], sys.argv[2]
    page = fetch(url).decode('utf-8')
    assets = sorted(set(re.findall(r'/static/[A-Za-z0-9_.-]+', page)))
    static = {}
    for path in assets:
        static[path] = fetch(urllib.parse.urljoin(url, path))
    script = re.search(r'<script src="/static/flamegraph\.js\?v=[0-9a-f]+"></script>', page)
    if not script:
        sys.exit('the page has no flamegraph.js script element: not a profile page?')
    tag = script.group(0)
    with open(os.path.join(HERE, 'pages', 'mini.js'), encoding='utf-8') as f:
        mini = f.read()
    fg = static['/static/flamegraph.js'].decode('utf-8')

    def drawer(mode):
        return '<script>window.__miniMode="%s";\n%s</script>' % (mode, mini)

    def styled(html):
        return html.replace('</style>', CSP_BOXES + '</style>', 1)

    variants = {
        'served': page,
        'inline': page.replace(tag, '<script>' + fg + '</script>'),
        'shell': page.replace(tag, DRAWN),
        'shell-tmpl': templated(page.replace(tag, DRAWN)),
        'mini': page.replace(tag, drawer('canvas')),
        'mini-dom': page.replace(tag, drawer('dom')),
        'mini-csp': styled(page.replace(tag, drawer('dom-csp'))),
        'mini-ext': styled(page.replace(tag, '<script>window.__miniMode="dom-csp";</script>'
                                        '<script src="/static/mini.js?v=1"></script>')),
        'notext': page,
        'mini-tmpl': templated(page.replace(tag, drawer('canvas'))),
        'ssr': page.replace(tag, boxes(page) + DRAWN + LATER_SCRIPT % re.search(r'src="([^"]+)"', tag).group(1)),
    }
    for name, html in variants.items():
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, 'static'))
        for path, body in static.items():
            if name == 'notext' and path == '/static/flamegraph.js':
                body = notext(body.decode('utf-8')).encode('utf-8')
            with open(os.path.join(d, path.lstrip('/')), 'wb') as f:
                f.write(body)
        if name == 'mini-ext':
            with open(os.path.join(d, 'static', 'mini.js'), 'w', encoding='utf-8') as f:
                f.write(mini)
        with open(os.path.join(d, 'index.html'), 'w', encoding='utf-8') as f:
            f.write(html)
        print(d)


if __name__ == '__main__':
    main()
