// Reproduces the writing loop of `exportBin` from seed 004 ("LandscapeAdvancedGen"), so that
// tests/bhef.rs can check Talus reads files made by the original program with the right
// orientation. The header/record writes are the seed's own: fwrite of two ints, then for
// i in 0..XBounds, j in 0..YBounds: fwrite of (i, j) as two ints and Data[i][j] as one float.
//
// Only two harmless changes: the seed's unused `std::ofstream file(...)` is left out, and its
// `delete` of arrays is spelled `delete[]`; neither touches the bytes written.
//
// Data[i][j] = 10*i + j + 0.25 on a 3 x 5 map (XBounds != YBounds, so a transposed reader fails).
// Build and run:  g++ -O1 -o exportbin seed004_exportbin.cpp && ./exportbin
// It writes "landscape.bhef" in the current directory, as the seed does.
#include <cstdio>

struct Heightmap {
    int XBounds;
    int YBounds;
    float **Data;
};

static void exportBin(Heightmap _heightmap) {
    FILE *f = fopen("landscape.bhef", "wb");
    if (!f) return;
    int *HM_global_header = new int[2];
    HM_global_header[0] = _heightmap.XBounds;
    HM_global_header[1] = _heightmap.YBounds;
    fwrite(HM_global_header, sizeof(int), 2, f);
    int *nodeID = new int[2];
    float *nodeHeight = new float(0);
    for (int i = 0; i < _heightmap.XBounds; i++)
        for (int j = 0; j < _heightmap.YBounds; j++) {
            nodeID[0] = i;
            nodeID[1] = j;
            nodeHeight[0] = _heightmap.Data[i][j];
            fwrite(nodeID, sizeof(int), 2, f);
            fwrite(nodeHeight, sizeof(float), 1, f);
        }
    delete[] HM_global_header;
    delete[] nodeID;
    delete nodeHeight;
    fclose(f);
}

int main() {
    const int X = 3, Y = 5;
    Heightmap hm;
    hm.XBounds = X;
    hm.YBounds = Y;
    hm.Data = new float *[X];
    for (int i = 0; i < X; i++) {
        hm.Data[i] = new float[Y];
        for (int j = 0; j < Y; j++) hm.Data[i][j] = 10.0f * i + j + 0.25f;
    }
    exportBin(hm);
    for (int i = 0; i < X; i++) delete[] hm.Data[i];
    delete[] hm.Data;
    return 0;
}
