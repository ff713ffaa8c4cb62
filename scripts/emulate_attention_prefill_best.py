#!/usr/bin/env python3
# A development check of tasks/attention_prefill/best.cu without a GPU: the kernel's data flow
# re-enacted lane by lane in numpy (ldmatrix with and without .trans and mma.m16n8k16 fragments as the
# PTX ISA defines them, the masks, the online softmax, P as hi + lo bf16) and compared with a float64
# reference: mixed lengths with a length-1 sequence and tiles straddling sequences, head dims 64 and
# 128. Keep it in step with the kernel. Needs numpy; not run by CI.
# Usage: python3 scripts/emulate_attention_prefill_best.py
import numpy as np
BM=BN=64; PAD=8
def bf(x):  # round to bf16 (nearest even), as float32
    x=np.asarray(x,dtype=np.float32); u=x.view(np.uint32).astype(np.uint64)
    u=(u+0x7fff+((u>>16)&1))&0xffff0000
    return u.astype(np.uint32).view(np.float32)
def ldsm(buf, addr, trans=False):  # addr(lane)->(row,col); returns regs[lane][4] of 2 values
    regs=np.zeros((32,4,2),np.float32)
    for i in range(4):
        mat=np.array([buf[addr(8*i+r)[0], addr(8*i+r)[1]:addr(8*i+r)[1]+8] for r in range(8)])
        for l in range(32):
            if not trans: regs[l,i]=mat[l//4, 2*(l%4):2*(l%4)+2]
            else: regs[l,i]=[mat[2*(l%4), l//4], mat[2*(l%4)+1, l//4]]
    return regs
def mma(c, a, b0, b1):  # c[lane][4], a[lane][4][2], b0/b1[lane][2]
    A=np.zeros((16,16)); B=np.zeros((16,8)); C=np.zeros((16,8))
    for l in range(32):
        g,t=l>>2,l&3
        A[g,2*t:2*t+2]=a[l,0]; A[g+8,2*t:2*t+2]=a[l,1]; A[g,2*t+8:2*t+10]=a[l,2]; A[g+8,2*t+8:2*t+10]=a[l,3]
        B[2*t:2*t+2,g]=b0[l]; B[2*t+8:2*t+10,g]=b1[l]
        C[g,2*t:2*t+2]=c[l,0:2]; C[g+8,2*t:2*t+2]=c[l,2:4]
    D=A@B+C
    out=np.zeros_like(c)
    for l in range(32):
        g,t=l>>2,l&3
        out[l,0:2]=D[g,2*t:2*t+2]; out[l,2:4]=D[g+8,2*t:2*t+2]
    return out
def seq_start(cu,i):
    return cu[np.searchsorted(cu,i,side='right')-1]
def item(q,k,v,cu,T,Hq,Hkv,D,scale,tile,h,out):
    stride=D+PAD; kvh=h//(Hq//Hkv); t0=tile*BM
    kv_begin=seq_start(cu,t0); kv_end=min(t0+BM,T)
    def load(src,row0,row_end,head):
        buf=np.zeros((64,stride),np.float32)
        for r in range(64):
            if row0+r<row_end: buf[r,:D]=src[row0+r,head]
        return buf
    sq=load(q,t0,T,h); sk=load(k,kv_begin,kv_end,kvh)
    for warp in range(4):
        r0=warp*16
        qf=[ldsm(sq,lambda l,kc=kc:(r0+(l%8)+((l//8)%2)*8, kc*16+(l//16)*8)) for kc in range(D//16)]
        lanes=np.arange(32); g=lanes>>2; t4=lanes&3
        row_a=t0+r0+g; row_b=row_a+8
        start_a=np.array([seq_start(cu,r) if r<T else 1<<40 for r in row_a]); start_b=np.array([seq_start(cu,r) if r<T else 1<<40 for r in row_b])
        wf=t0+r0; live=wf<T; wl=min(wf+15,T-1); wlo=seq_start(cu,wf) if live else 0
        o=np.zeros((D//8,32,4),np.float32); m_a=np.full(32,-np.inf,np.float32); m_b=m_a.copy(); l_a=np.zeros(32,np.float32); l_b=l_a.copy()
        sl=np.float32(scale*1.4426950408889634)
        j0=kv_begin
        while j0<kv_end:
            sk=load(k,j0,kv_end,kvh); sv=load(v,j0,kv_end,kvh)
            active= live and j0<=wl and j0+BN>wlo
            if active:
                s=np.zeros((BN//8,32,4),np.float32)
                for kc in range(D//16):
                    for np_ in range(BN//16):
                        kb=ldsm(sk,lambda l:(np_*16+(l%8)+(l//16)*8, kc*16+((l//8)%2)*8))
                        s[2*np_]=mma(s[2*np_],qf[kc],kb[:,0],kb[:,1]); s[2*np_+1]=mma(s[2*np_+1],qf[kc],kb[:,2],kb[:,3])
                for n in range(BN//8):
                    for e in range(2):
                        j=j0+n*8+2*t4+e
                        s[n,:,e]=np.where((j>=start_a)&(j<=row_a), s[n,:,e]*sl, -np.inf)
                        s[n,:,2+e]=np.where((j>=start_b)&(j<=row_b), s[n,:,2+e]*sl, -np.inf)
                mt_a=s[:,:,0:2].max(axis=(0,2)); mt_b=s[:,:,2:4].max(axis=(0,2))
                mt_a=mt_a.reshape(8,4).max(axis=1).repeat(4); mt_b=mt_b.reshape(8,4).max(axis=1).repeat(4)
                mn_a=np.maximum(m_a,mt_a); mn_b=np.maximum(m_b,mt_b)
                mu_a=np.where(mn_a==-np.inf,0,mn_a); mu_b=np.where(mn_b==-np.inf,0,mn_b)
                al_a=np.exp2(m_a-mu_a); al_b=np.exp2(m_b-mu_b)
                s[:,:,0:2]=np.exp2(s[:,:,0:2]-mu_a[None,:,None]); s[:,:,2:4]=np.exp2(s[:,:,2:4]-mu_b[None,:,None])
                l_a=l_a*al_a+s[:,:,0:2].sum(axis=(0,2)); l_b=l_b*al_b+s[:,:,2:4].sum(axis=(0,2))
                o[:,:,0:2]*=al_a[None,:,None]; o[:,:,2:4]*=al_b[None,:,None]
                m_a,m_b=mn_a,mn_b
                for kk in range(BN//16):
                    P=np.stack([s[2*kk][:,0:2],s[2*kk][:,2:4],s[2*kk+1][:,0:2],s[2*kk+1][:,2:4]],axis=1)  # [lane][4][2]
                    hi=bf(P); lo=bf(P-hi)
                    for dp in range(D//16):
                        vb=ldsm(sv,lambda l:(kk*16+(l%8)+((l//8)%2)*8, dp*16+(l//16)*8),trans=True)
                        for part in (hi,lo):
                            o[2*dp]=mma(o[2*dp],part,vb[:,0],vb[:,1]); o[2*dp+1]=mma(o[2*dp+1],part,vb[:,2],vb[:,3])
            j0+=BN
        l_a=l_a.reshape(8,4).sum(axis=1).repeat(4); l_b=l_b.reshape(8,4).sum(axis=1).repeat(4)
        for ln in range(32):
            for n in range(D//8):
                c=n*8+2*t4[ln]
                if row_a[ln]<T: out[row_a[ln],h,c:c+2]=o[n,ln,0:2]/l_a[ln]
                if row_b[ln]<T: out[row_b[ln],h,c:c+2]=o[n,ln,2:4]/l_b[ln]
rng=np.random.default_rng(1)
for (lengths,Hq,Hkv,D) in [([1,70,5,90],4,2,64),([130],2,1,128)]:
    cu=np.concatenate([[0],np.cumsum(lengths)]); T=cu[-1]
    q=bf(rng.standard_normal((T,Hq,D))); k=bf(rng.standard_normal((T,Hkv,D))); v=bf(rng.standard_normal((T,Hkv,D)))
    scale=1/np.sqrt(D); out=np.full((T,Hq,D),np.nan)
    tiles=(T+63)//64
    for w in range(tiles*Hq): item(q,k,v,cu,T,Hq,Hkv,D,scale,tiles-1-w//Hq,w%Hq,out)
    ref=np.zeros_like(out)
    for i in range(T):
        st=seq_start(cu,i)
        for h in range(Hq):
            kv=h//(Hq//Hkv); x=scale*(k[st:i+1,kv].astype(np.float64)@q[i,h]); p=np.exp(x-x.max()); ref[i,h]=(p@v[st:i+1,kv])/p.sum()
    print(lengths,Hq,Hkv,D,"max |err|",np.nanmax(np.abs(out-ref)),"nan",np.isnan(out).sum())
