// The kernel's own cost of a file per chunk (issue 21), beside which
// bench/small_chunks.R's ratios are read: 128 MiB as 4096 files of 32 KiB
// against 256 files of 512 KiB, laid out c/i/j as a Zarr v3 store, with
// no Zarr code at all. Writes: a temporary file created, written, closed
// and renamed into place (as the file store makes a new chunk atomic);
// reads: open + read + close, and stat + open + fstat + read + close (the
// store's calls before this change). Prints medians and 4096/256 ratios.
//   cc -O2 -o file_floor bench/file_floor.c && ./file_floor <dir> [repeats]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/uio.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
#define TOTAL (128u<<20)
static char *buf;
static void rmtree(const char*d){char cmd[8192];snprintf(cmd,sizeof cmd,"rm -rf '%s'",d);if(system(cmd)){}}
static double do_write(const char*root,int side){
  rmtree(root); mkdir(root,0755);
  char p[4096],t[4096]; size_t sz=TOTAL/(side*side); int k=0;
  double t0=now();
  snprintf(p,sizeof p,"%s/c",root); mkdir(p,0755);
  for(int i=0;i<side;i++){snprintf(p,sizeof p,"%s/c/%d",root,i); mkdir(p,0755);
    for(int j=0;j<side;j++,k++){
      snprintf(t,sizeof t,"%s/c/%d/.tmp-%d",root,i,k); snprintf(p,sizeof p,"%s/c/%d/%d",root,i,j);
      int fd=open(t,O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC,0644); if(fd<0){perror(t);exit(1);}
      if(write(fd,buf+(size_t)k*sz,sz)!=(ssize_t)sz){perror("write");exit(1);} close(fd);
      if(rename(t,p)){perror("rename");exit(1);} }}
  return now()-t0;
}
static double do_read(const char*root,int side,int extra){
  char p[4096]; size_t sz=TOTAL/(side*side); int k=0; struct stat st;
  double t0=now();
  for(int i=0;i<side;i++) for(int j=0;j<side;j++,k++){
    snprintf(p,sizeof p,"%s/c/%d/%d",root,i,j);
    if(extra && stat(p,&st)) {perror(p);exit(1);}
    int fd=open(p,O_RDONLY|O_CLOEXEC|(extra?O_NONBLOCK:0)); if(fd<0){perror(p);exit(1);}
    if(extra) fstat(fd,&st);
    if(read(fd,buf+(size_t)k*sz,sz)!=(ssize_t)sz){perror("read");exit(1);} close(fd);}
  return now()-t0;
}
int main(int argc,char**argv){
  const char*base=argv[1]; int reps=argc>2?atoi(argv[2]):7;
  buf=malloc(TOTAL); memset(buf,1,TOTAL);
  char r64[4096],r256[4096]; snprintf(r64,sizeof r64,"%s/f64",base); snprintf(r256,sizeof r256,"%s/f256",base);
  double w[2][64],r[2][64],rx[2][64];
  for(int rep=0;rep<reps;rep++){
    w[0][rep]=do_write(r64,64); w[1][rep]=do_write(r256,16);
    r[0][rep]=do_read(r64,64,0); r[1][rep]=do_read(r256,16,0);
    rx[0][rep]=do_read(r64,64,1); rx[1][rep]=do_read(r256,16,1);
  }
  for(int s=0;s<2;s++){qsort(w[s],reps,8,cmp);qsort(r[s],reps,8,cmp);qsort(rx[s],reps,8,cmp);}
  int m=reps/2;
  printf("%s: write tmp+rename 4096 %.4f s, 256 %.4f s, ratio %.2f, per file extra %.1f us\n",base,w[0][m],w[1][m],w[0][m]/w[1][m],(w[0][m]-w[1][m])/3840*1e6);
  printf("%s: read open+read+close 4096 %.4f s, 256 %.4f s, ratio %.2f, per file extra %.1f us\n",base,r[0][m],r[1][m],r[0][m]/r[1][m],(r[0][m]-r[1][m])/3840*1e6);
  printf("%s: read stat+open+fstat+read+close 4096 %.4f s, 256 %.4f s, ratio %.2f\n",base,rx[0][m],rx[1][m],rx[0][m]/rx[1][m]);
  rmtree(r64); rmtree(r256);
  return 0;
}
