#!/usr/bin/env python3
# A development check of tasks/attention_decode_paged/best.cu without a GPU: the kernel's data flow
# re-enacted lane by lane in numpy (xor shuffles as lane ^ offset, the chunked online softmax, the
# partition records and the last-arriving combine, with the work items in three orders) and compared
# with a float64 reference: contexts of 1, 16, 33 and past one partition, head dims 64 and 128,
# groups of 2, 4 and 8 heads. Keep it in step with the kernel. Needs numpy; not run by CI.
# Usage: python3 scripts/emulate_attention_decode_best.py
import numpy as np
BS=16; PART=32
def bf(x):
    x=np.asarray(x,dtype=np.float32); u=x.view(np.uint32).astype(np.uint64)
    u=(u+0x7fff+((u>>16)&1))&0xffff0000
    return u.astype(np.uint32).view(np.float32)
def xor(a,off): return a[np.arange(32)^off]
def run(q,kc,vc,tables,ctxs,Hq,Hkv,D,scale,G,order):
    B=len(ctxs); maxb=tables.shape[1]; max_parts=(maxb+PART-1)//PART; group=Hq//Hkv
    out=np.full((B,Hq,D),np.nan,np.float32); ws=np.zeros((B,Hq,max_parts,D+2),np.float32); counters=np.zeros(B*Hq,int)
    items=[(w % max_parts, w//max_parts % Hkv, w//(max_parts*Hkv)) for w in range(B*Hkv*max_parts)]
    for idx in order(len(items)):
        p,kvh,b=items[idx]
        LK=D//8; KS=32//LK; CHUNK=4 if G>=8 else 8; steps=CHUNK//KS
        lane=np.arange(32); sub=lane//LK; part=lane%LK
        ctx=ctxs[b]; nblocks=(ctx+BS-1)//BS; parts=(nblocks+PART-1)//PART
        if p>=parts: continue
        sl=np.float32(scale*1.4426950408889634); head0=kvh*group
        qf=np.zeros((G,32,8),np.float32)
        for g in range(G):
            if g<group:
                for l in range(32): qf[g,l]=q[b,head0+g,part[l]*8:part[l]*8+8]
            qf[g]*=sl
        m=np.full((G,32),-np.inf,np.float32); lsum=np.zeros((G,32),np.float32); acc=np.zeros((G,32,8),np.float32)
        for blk in range(p*PART, min(nblocks,p*PART+PART)):
            phys=tables[b,blk]
            for c in range(BS//CHUNK):
                first=blk*BS+c*CHUNK
                if first>=ctx: break
                kr=np.zeros((steps,32,8),np.float32); vr=kr.copy()
                for it in range(steps):
                    for l in range(32):
                        tok=c*CHUNK+it*KS+sub[l]
                        kr[it,l]=kc[phys,tok,kvh,part[l]*8:part[l]*8+8]; vr[it,l]=vc[phys,tok,kvh,part[l]*8:part[l]*8+8]
                s=np.zeros((steps,G,32),np.float32)
                for it in range(steps):
                    for g in range(G):
                        dot=(qf[g]*kr[it]).sum(axis=1).astype(np.float32)
                        off=LK//2
                        while off>0: dot=dot+xor(dot,off); off//=2
                        s[it,g]=np.where(first+it*KS+sub<ctx,dot,-np.inf)
                for g in range(G):
                    mc=s[:,g].max(axis=0)
                    off=LK
                    while off<32: mc=np.maximum(mc,xor(mc,off)); off*=2
                    mn=np.maximum(m[g],mc); al=np.exp2(m[g]-mn)
                    lsum[g]*=al; acc[g]*=al[:,None]
                    for it in range(steps):
                        pw=np.exp2(s[it,g]-mn); lsum[g]+=pw; acc[g]+=pw[:,None]*vr[it]
                    m[g]=mn
        for g in range(G):
            off=LK
            while off<32: lsum[g]=lsum[g]+xor(lsum[g],off); acc[g]=acc[g]+xor(acc[g],off); off*=2
        if parts==1:
            for g in range(min(G,group)):
                for l in range(32):
                    if sub[l]==0: out[b,head0+g,part[l]*8:part[l]*8+8]=acc[g,l]/lsum[g,l]
            continue
        for g in range(min(G,group)):
            ws[b,head0+g,p,0]=m[g,0]; ws[b,head0+g,p,1]=lsum[g,0]
            for l in range(32):
                if sub[l]==0: ws[b,head0+g,p,2+part[l]*8:2+part[l]*8+8]=acc[g,l]
        cidx=b*Hkv+kvh; last=counters[cidx]==parts-1; counters[cidx]+=1
        if not last: continue
        for g in range(group):
            M=max(ws[b,head0+g,pp,0] for pp in range(parts)); L=0; ssum=np.zeros(D,np.float32)
            for pp in range(parts):
                w=np.exp2(ws[b,head0+g,pp,0]-M); L+=w*ws[b,head0+g,pp,1]; ssum+=w*ws[b,head0+g,pp,2:]
            out[b,head0+g]=ssum/L
        counters[cidx]=0
    return out,counters
rng=np.random.default_rng(2)
for (ctxs,Hq,Hkv,D) in [([1,1500,33,512,513],8,1,128),([700,16,1],4,2,64),([1100],8,4,128)]:
    B=len(ctxs); maxb=(max(ctxs)+15)//16; used=sum((c+15)//16 for c in ctxs); nb=used+3
    perm=rng.permutation(np.arange(1,nb)); tables=np.zeros((B,maxb),int); n=0
    for b,c in enumerate(ctxs):
        for blk in range((c+15)//16): tables[b,blk]=perm[n]; n+=1
    q=bf(rng.standard_normal((B,Hq,D))); kc=bf(rng.standard_normal((nb,16,Hkv,D))); vc=bf(rng.standard_normal((nb,16,Hkv,D)))
    scale=1/np.sqrt(D); group=Hq//Hkv; G=8 if group==8 else 4
    ref=np.zeros((B,Hq,D))
    for b,c in enumerate(ctxs):
        for h in range(Hq):
            kv=h//group; ks=np.array([kc[tables[b,t//16],t%16,kv] for t in range(c)],np.float64); vs=np.array([vc[tables[b,t//16],t%16,kv] for t in range(c)],np.float64)
            x=scale*(ks@q[b,h]); p=np.exp(x-x.max()); ref[b,h]=(p@vs)/p.sum()
    for name,order in [("in order",lambda n: range(n)),("reversed",lambda n: range(n-1,-1,-1)),("shuffled",lambda n: rng.permutation(n))]:
        out,counters=run(q,kc,vc,tables,ctxs,Hq,Hkv,D,scale,G,order)
        print(ctxs,Hq,Hkv,D,name,"max|err|",np.nanmax(np.abs(out-ref)),"nan",int(np.isnan(out).sum()),"counters",int(counters.sum()))
