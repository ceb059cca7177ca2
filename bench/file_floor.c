// The kernel's own cost of a file per chunk (issue 21), beside which
// bench/small_chunks.R's ratios are read: 128 MiB as 4096 files of 32 KiB
// against 256 files of 512 KiB, laid out c/i/j as a Zarr v3 store, with
// no Zarr code at all. Each way of doing it prints medians, the 4096/256
// ratio and the extra time per file.
// Writes (each one atomic, a reader sees no partial file):
//   rename  temporary file created by full path, written, closed, renamed
//           into place (the file store's way);
//   at      the same through a descriptor of the row's folder (openat,
//           renameat): no walk of the path from the root per call;
//   tmpfile O_TMPFILE in the row's folder, written, linked into place by
//           linkat of /proc/self/fd (Linux; fails where the name exists).
// And not atomic:
//   create  the file itself created exclusively by full path, written,
//           closed (the file store with `zarr.atomic_writes = FALSE`).
// Reads:
//   plain   open + read + close by full path;
//   fstat   open (O_NONBLOCK) + fstat + read + close (the store before);
//   stat    stat + open + fstat + read + close (the store before that);
//   at      openat of the last component from the row's folder + read of
//           size+1 bytes (the count says the size) + close;
//   atfstat the same with an fstat (type and size) before the read.
//   cc -O2 -o file_floor bench/file_floor.c && ./file_floor <dir> [repeats]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/uio.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
#define TOTAL (128u<<20)
static char *buf;
static void die(const char*s){perror(s);exit(1);}
static void rmtree(const char*d){char cmd[8192];snprintf(cmd,sizeof cmd,"rm -rf '%s'",d);if(system(cmd)){}}
enum {W_RENAME, W_AT, W_TMPFILE, W_CREATE, NW};
static const char*wname[NW]={"rename","at","tmpfile","create"};
static double do_write(const char*root,int side,int how){
  rmtree(root); mkdir(root,0755);
  char p[4096],t[4096]; size_t sz=TOTAL/(side*side); int k=0;
  double t0=now();
  snprintf(p,sizeof p,"%s/c",root); mkdir(p,0755);
  for(int i=0;i<side;i++){snprintf(p,sizeof p,"%s/c/%d",root,i); mkdir(p,0755);
    int dfd=how==W_RENAME||how==W_CREATE?-1:open(p,O_RDONLY|O_DIRECTORY|O_CLOEXEC);
    for(int j=0;j<side;j++,k++){
      const char*src=buf+(size_t)k*sz; int fd;
      if(how==W_RENAME){
        snprintf(t,sizeof t,"%s/c/%d/.tmp-%d",root,i,k); snprintf(p,sizeof p,"%s/c/%d/%d",root,i,j);
        if((fd=open(t,O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC,0644))<0) die(t);
        if(write(fd,src,sz)!=(ssize_t)sz) die("write");
        close(fd);
        if(rename(t,p)) die("rename");
      } else if(how==W_CREATE){
        snprintf(p,sizeof p,"%s/c/%d/%d",root,i,j);
        if((fd=open(p,O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC,0644))<0) die(p);
        if(write(fd,src,sz)!=(ssize_t)sz) die("write");
        close(fd);
      } else if(how==W_AT){
        snprintf(t,sizeof t,".tmp-%d",k); snprintf(p,sizeof p,"%d",j);
        if((fd=openat(dfd,t,O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC,0644))<0) die(t);
        if(write(fd,src,sz)!=(ssize_t)sz) die("write");
        close(fd);
        if(renameat(dfd,t,dfd,p)) die("renameat");
      } else {
        snprintf(p,sizeof p,"%d",j);
        if((fd=openat(dfd,".",O_TMPFILE|O_WRONLY|O_CLOEXEC,0644))<0) die("O_TMPFILE");
        if(write(fd,src,sz)!=(ssize_t)sz) die("write");
        snprintf(t,sizeof t,"/proc/self/fd/%d",fd);
        if(linkat(AT_FDCWD,t,dfd,p,AT_SYMLINK_FOLLOW)) die("linkat");
        close(fd);
      }
    }
    if(dfd>=0) close(dfd);}
  return now()-t0;
}
enum {R_PLAIN, R_FSTAT, R_STAT, R_AT, R_ATFSTAT, NR};
static const char*rname[NR]={"plain","fstat","stat","at","atfstat"};
static double do_read(const char*root,int side,int how){
  char p[4096]; size_t sz=TOTAL/(side*side); int k=0; struct stat st;
  double t0=now();
  for(int i=0;i<side;i++){
    int dfd=-1;
    if(how>=R_AT){snprintf(p,sizeof p,"%s/c/%d",root,i); if((dfd=open(p,O_RDONLY|O_DIRECTORY|O_CLOEXEC))<0) die(p);}
    for(int j=0;j<side;j++,k++){
      char*dst=buf+(size_t)k*sz; int fd; char extra;
      if(how==R_AT||how==R_ATFSTAT){
        snprintf(p,sizeof p,"%d",j);
        if((fd=openat(dfd,p,O_RDONLY|O_CLOEXEC|O_NONBLOCK|O_NOCTTY))<0) die(p);
        if(how==R_ATFSTAT){
          if(fstat(fd,&st)||!S_ISREG(st.st_mode)||st.st_size!=(off_t)sz) die("fstat");
          if(read(fd,dst,sz)!=(ssize_t)sz) die("read");
        } else {
          struct iovec v[2]={{dst,sz},{&extra,1}};
          if(readv(fd,v,2)!=(ssize_t)sz) die("readv");
        }
        close(fd);
        continue;
      }
      snprintf(p,sizeof p,"%s/c/%d/%d",root,i,j);
      if(how==R_STAT && stat(p,&st)) die(p);
      if((fd=open(p,O_RDONLY|O_CLOEXEC|(how!=R_PLAIN?O_NONBLOCK:0)))<0) die(p);
      if(how!=R_PLAIN) fstat(fd,&st);
      if(read(fd,dst,sz)!=(ssize_t)sz) die("read");
      close(fd);}
    if(dfd>=0) close(dfd);}
  return now()-t0;
}
int main(int argc,char**argv){
  if(argc<2){fprintf(stderr,"usage: file_floor <dir> [repeats]\n");return 2;}
  const char*base=argv[1]; int reps=argc>2?atoi(argv[2]):7; if(reps<1||reps>64) reps=7;
  // Backed by huge pages where the system allows, as the package's results
  // are (pages.rs): with 4 KiB pages the copy into the buffer, not the
  // files, sets the time of 256 large files (three times as long here).
  buf=aligned_alloc(2<<20,TOTAL); if(!buf) die("aligned_alloc");
  madvise(buf,TOTAL,MADV_HUGEPAGE); memset(buf,1,TOTAL);
  char r64[4096],r256[4096]; snprintf(r64,sizeof r64,"%s/f64",base); snprintf(r256,sizeof r256,"%s/f256",base);
  static double w[NW][2][64],r[NR][2][64];
  for(int rep=0;rep<reps;rep++){
    for(int h=0;h<NW;h++){w[h][0][rep]=do_write(r64,64,h); w[h][1][rep]=do_write(r256,16,h);}
    for(int h=0;h<NR;h++){r[h][0][rep]=do_read(r64,64,h); r[h][1][rep]=do_read(r256,16,h);}
  }
  int m=reps/2;
  for(int h=0;h<NW;h++){double*a=w[h][0],*b=w[h][1]; qsort(a,reps,8,cmp);qsort(b,reps,8,cmp);
    printf("write %-8s 4096 %.4f s, 256 %.4f s, ratio %.2f, per file extra %.1f us\n",wname[h],a[m],b[m],a[m]/b[m],(a[m]-b[m])/3840*1e6);}
  for(int h=0;h<NR;h++){double*a=r[h][0],*b=r[h][1]; qsort(a,reps,8,cmp);qsort(b,reps,8,cmp);
    printf("read  %-8s 4096 %.4f s, 256 %.4f s, ratio %.2f, per file extra %.1f us\n",rname[h],a[m],b[m],a[m]/b[m],(a[m]-b[m])/3840*1e6);}
  rmtree(r64); rmtree(r256);
  return 0;
}
