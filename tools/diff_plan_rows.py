#!/usr/bin/python3
"""Rows whose predicted peak or warnings differ between two `tools/unseen_models.py compare` JSON files.

    /usr/bin/python3 tools/diff_plan_rows.py BEFORE.json AFTER.json

Rows are keyed by (model, batch, optimizer); prints each changed row (predicted peak, error before -> after, and
whether its warnings changed), then "changed N of M". How a rule written elsewhere moves a set it never saw."""
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
ra={(x['model'],x['batch'],x['optimizer']):x for x in a['rows']}
rb={(x['model'],x['batch'],x['optimizer']):x for x in b['rows']}
n=0
for k in ra:
    if 'predicted' not in ra[k] or k not in rb or 'predicted' not in rb[k]: continue
    pa=ra[k]['predicted']['peak']; pb=rb[k]['predicted']['peak']
    if pa!=pb or ra[k].get('warnings')!=rb[k].get('warnings'):
        n+=1; print(k, 'pred', pa, '->', pb, 'err %.2f -> %.2f'%(100*ra[k]['rel_error']['peak'],100*rb[k]['rel_error']['peak']), 'warn changed' if ra[k].get('warnings')!=rb[k].get('warnings') else '')
print('changed',n,'of',len(ra))
