#!/bin/sh
# mkseeds.sh BIN OUT: how the seeds of the fuzz corpora (the files with a dot in their name in
# tests/fuzz/corpus/) were made; makes them again into OUT/{stream,ckpt,idx} (the same files,
# not the same bytes when the data or the programs changed).
# BIN: the built programs (build/bin); /usr/bin/python3 with python3-msgpack crafts the rest.
#   stream: small real streams of every kind, from a pipeline on 1- and 2-digit images, plus
#           hand-made edge cases (empty, cut short, no records, raw meta values, two streams)
#   ckpt:   a real checkpoint (1.17 MB: the smallest model has 97k parameters) and small
#           checkpoint streams whose tensors do not fit the model, for the header and shape checks
#           (one of them of a 3-channel model, for the input geometry)
#   idx:    small idx files, raw and gzipped
#   npy:    the public generator's image-id files: .npy of several dtypes and orders, .npz
#           stored and deflated; and fromnpz's inputs: embeddings (mu, var, labels, id, eta and
#           extras of every dtype), images and features (float [n, F] with a corrupt flag, and
#           [n, 1, F]) (/usr/bin/python3 with python3-numpy)
set -eu
BIN=$1
OUT=$2
mkdir -p "$OUT/stream" "$OUT/ckpt" "$OUT/idx" "$OUT/npy"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
s=$OUT/stream
"$BIN/mkdigits" -N 2 -s test-seen -n 3 --per-class 1 > "$s/images2.hs"
"$BIN/mkdigits" -N 1 -s test-seen -n 2 --per-class 1 > "$tmp/img1.hs"
"$BIN/occlude" -p 1 < "$tmp/img1.hs" > "$s/occluded1.hs"
"$BIN/mkdigits" -N 1 -s train -n 20 --per-class 2 > "$tmp/train.hs"
"$BIN/batcher" -b 2 -n 2 < "$tmp/train.hs" > "$s/pairbatch.hs"
"$BIN/batcher" -m pk -P 2 -K 2 -n 1 < "$tmp/train.hs" > "$s/groupbatch.hs"
"$BIN/batcher" -m episodes -c 2 -s 1 -q 1 -n 1 < "$tmp/train.hs" > "$s/episodes.hs"
"$BIN/train" -n 2 -D 2 --head point --save-every 1 -t 1 -o "$tmp/point.ckpt" < "$s/pairbatch.hs" 2> /dev/null
"$BIN/train" -n 2 -D 2 --head mog -C 2 -K 2 --save-every 1 -t 1 -o "$tmp/mog.ckpt" < "$s/pairbatch.hs" 2> /dev/null
cp "$tmp/point.ckpt" "$OUT/ckpt/point.ckpt"
"$BIN/mkdigits" -N 1 -s test-seen -n 8 --per-class 2 | "$BIN/occlude" -p 0.5 > "$tmp/img8.hs"
"$BIN/embed" -m "$tmp/point.ckpt" < "$tmp/img8.hs" > "$s/embeddings-point.hs"
"$BIN/embed" -m "$tmp/mog.ckpt" < "$tmp/img8.hs" > "$s/embeddings-mog.hs"
"$BIN/pairscore" -n 4 < "$s/embeddings-mog.hs" > "$s/pairscores.hs"
"$BIN/pairscore" --self < "$s/embeddings-mog.hs" > "$s/eta.hs"
"$BIN/knn" -k 2 < "$s/eta.hs" > "$s/knn.hs"

/usr/bin/python3 - "$tmp" "$OUT" << 'EOF'
import gzip, struct, sys, msgpack
tmp, out = sys.argv[1], sys.argv[2]

def objects(path):
    return list(msgpack.Unpacker(open(path, 'rb'), raw=False))

def write(path, objs):
    with open(path, 'wb') as f:
        for o in objs:
            f.write(msgpack.packb(o, use_bin_type=True, unicode_errors='surrogateescape'))

# stream edge cases, from the 1-digit images stream
img = objects(tmp + '/img1.hs')
hdr, recs, end = img[0], img[1:-1], img[-1]
s = out + '/stream/'
open(s + 'empty.hs', 'wb').close()
write(s + 'no-records.hs', [hdr, {'end': 0}])
write(s + 'no-trailer.hs', [hdr] + recs)
data = open(tmp + '/img1.hs', 'rb').read()
open(s + 'cut-in-record.hs', 'wb').write(data[: len(data) - 200])
write(s + 'two-streams.hs', [hdr, {'end': 0}, hdr, {'end': 0}])
raw = dict(hdr)
raw['meta'] = {'nil': None, 'list': [1, -2, 3.5, 'x', b'\x00\x01', [True]], 'map': {1: 'one', 'k': {2.5: None}},
               'tensor': {'dtype': 'int64', 'shape': [2], 'data': b'\x01' * 16}, 'big': 2**64 - 1, 'neg': -2**63,
               'f': float('inf'), 'bad\udcff': 'not UTF-8: \udcc3('}
raw['provenance'] = {'program': 'x', 'args': ['a', 1], 'seed': 7, 'input': [hdr, hdr]}
write(s + 'raw-meta.hs', [raw] + recs + [{'end': len(recs)}])
bat = {'format': 'hedge-stream', 'version': 1, 'kind': 'b', 'batched': True,
       'fields': [{'name': 'x', 'dtype': 'float64', 'shape': [0, 3]}, {'name': 'y', 'dtype': 'int32', 'shape': []}],
       'meta': {}, 'provenance': {'program': 'p', 'args': [], 'input': []}}
t = lambda dt, sh, n: {'dtype': dt, 'shape': sh, 'data': b'\x00' * n}
write(s + 'batched-zero.hs', [bat, {'x': t('float64', [2, 0, 3], 0), 'y': t('int32', [2], 8)},
                              {'x': t('float64', [0, 0, 3], 0), 'y': t('int32', [0], 0)}, {'end': 2}])

# checkpoint streams whose tensors do not fit the model: the header as train wrote it, every
# tensor of shape [1] (a stream that is valid, a checkpoint that is not)
for name in ('point', 'mog'):
    ck = objects(tmp + '/' + name + '.ckpt')
    h = ck[0]
    small = dict(h)
    small['fields'] = [dict(f, shape=[1]) for f in h['fields']]
    rec = {f['name']: t(f['dtype'], [1], 4) for f in h['fields']}
    write('%s/ckpt/%s-small-tensors.ckpt' % (out, name), [small, rec, {'end': 1}])
    write('%s/ckpt/%s-no-record.ckpt' % (out, name), [h, {'end': 0}])
    if name == 'point':  # a 3-channel model's header: no digits; channels, height, width
        meta = {k: v for k, v in small['meta'].items() if k != 'digits'}
        meta.update(channels=3, height=8, width=12)
        write('%s/ckpt/rgb-small-tensors.ckpt' % out, [dict(small, meta=meta), rec, {'end': 1}])
    if name == 'mog':
        sgd = dict(small, meta=dict(small['meta'], optim='sgd', momentum=0.5, beta2=0.0, step=0, optim_t=0))
        write('%s/ckpt/mog-sgd-small-tensors.ckpt' % out, [sgd, rec, {'end': 1}])
        u8 = dict(small, fields=[dict(f, dtype='uint8') if f['name'].startswith('optim') else f for f in small['fields']])
        rec8 = dict(rec, **{'optim.m': t('uint8', [1], 1), 'optim.v': t('uint8', [1], 1)})
        write('%s/ckpt/mog-uint8-moments.ckpt' % out, [u8, rec8, {'end': 1}])

# idx files, raw and gzipped
def idx(dims, data):
    return bytes([0, 0, 8, len(dims)]) + b''.join(struct.pack('>I', d) for d in dims) + data
files = {'labels': idx([5], bytes([3, 1, 4, 1, 5])),
         'images': idx([2, 28, 28], bytes((i * 7) % 256 for i in range(2 * 784))),
         'matrix': idx([3, 4], bytes(range(12))),
         'cube4': idx([1, 2, 2, 2], bytes(range(8)))}
for name, b in files.items():
    open('%s/idx/%s.idx' % (out, name), 'wb').write(b)
    open('%s/idx/%s.idx.gz' % (out, name), 'wb').write(gzip.compress(b, mtime=0))

# the public generator's image-id files (mkdigits --image-ids): .npy of several dtypes and
# orders, .npz stored and deflated
import os
import numpy as np
os.makedirs(out + '/npy', exist_ok=True)
ids = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], dtype='<i8')
np.save(out + '/npy/ids3.npy', ids)
np.save(out + '/npy/ids2-i4.npy', ids.reshape(4, 2).astype('<i4'))
np.save(out + '/npy/ids2-be-u2.npy', ids.reshape(4, 2).astype('>u2'))
np.save(out + '/npy/float.npy', ids.astype('<f4'))
np.save(out + '/npy/fortran.npy', np.asfortranarray(ids.reshape(4, 2)))
extra = dict(chosen_numbers=np.array([12, 34], dtype='<i8'), sample_per_number=np.array(2))
np.savez(out + '/npy/stored.npz', image_ids=ids, **extra)
np.savez_compressed(out + '/npy/deflated.npz', image_ids=ids, **extra)
# fromnpz's: embeddings with every role and extras of each dtype, [n, C, D] big-endian deflated,
# images uint8 [n, H, W] and float [n, C, H, W]
n = 3
r = np.arange(n * 4, dtype='<f8').reshape(n, 4) / 7
np.savez(out + '/npy/emb.npz', mu=r, var=r + 1, labels=np.arange(n, dtype='<i2'), id=np.arange(n, dtype='<u8'),
         eta=np.linspace(0, 1, n), flag=np.arange(n) % 2 == 0, small=np.arange(n, dtype='|u1'),
         wide=np.arange(n) << 40, score=np.ones((n, 2), '<f4'), other=np.arange(2))
np.savez_compressed(out + '/npy/emb-mix.npz', mu=r.reshape(n, 2, 2).astype('>f8'), var=r.reshape(n, 2, 2), cls=np.arange(n))
np.savez(out + '/npy/img.npz', image=np.arange(n * 4 * 5, dtype='|u1').reshape(n, 4, 5), label=np.arange(n))
np.savez_compressed(out + '/npy/img-float.npz', image=np.linspace(0, 1, n * 2 * 3 * 3).reshape(n, 2, 3, 3))
# features [n, F] float64 with labels, a corrupt flag and an extra; [n, 1, F] float32 deflated
np.savez(out + '/npy/features.npz', features=r, labels=np.arange(n), corrupt=np.arange(n) % 2, attr=np.arange(n, dtype='<i2'))
np.savez_compressed(out + '/npy/features-mu.npz', features=r.reshape(n, 1, 4).astype('<f4'), id=np.arange(n) + 7)
EOF
