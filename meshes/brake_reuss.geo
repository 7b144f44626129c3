// Bolted lap-joint beam after the Brake-Reuss beam (lengths in m), for the fesub joint study.
// Two half-beams of 25.4 x 25.4 mm section, each 420 mm long; over the last 120 mm (the lap) each
// half is 12.7 mm thick, the lower half's lap under the upper half's, so the assembled beam is
// 720 mm long and its lap 300 mm <= x <= 420 mm. Three bolt positions at x = 330, 360 and 390 mm
// (-30, 0, 30 mm from the lap centre), y = 12.7 mm; the bolt holes are not modelled.
// The mesh is structured (eight-node hexahedra) and conforming through the whole beam: the lap
// face z = 12.7 mm is one surface whose nodes each half's volume holds, so a model that cuts the
// beam along its two physical volumes gets node pairs on the two lap faces.
// Make the bundled meshes with:  gmsh brake_reuss.geo -3 -format msh22 -o brake_reuss.msh
// and  gmsh brake_reuss.geo -setnumber coarse 1 -3 -format msh22 -o brake_reuss_coarse.msh
SetFactory("Built-in");
b = 25.4e-3;  h = 12.7e-3;  e = 1e-6;
// cross-section grid (x = 0): y breaks at the washer patches' edges (16 mm wide, centred)
// coarse = 1 (gmsh -setnumber coarse 1) makes the small mesh of the tests and the example
If (!Exists(coarse))
  coarse = 0;
EndIf
Y[] = {0, 4.7e-3, 20.7e-3, b};
// segments along x: full section, the lap (washer patches 16 mm long at 330, 360, 390 mm), full
X[] = {0, 0.300, 0.322, 0.338, 0.352, 0.368, 0.382, 0.398, 0.420, 0.720};
If (coarse)
  NY[] = {2, 3, 2};                        // nodes per segment in y (1, 2, 1 elements)
  NZ = 3;                                  // nodes across a half thickness (2 elements)
  NX[] = {12, 1, 2, 1, 2, 1, 2, 1, 12};    // elements per segment in x
Else
  NY[] = {3, 6, 3};                        // nodes per segment in y (2, 5, 2 elements)
  NZ = 4;                                  // nodes across a half thickness (3 elements)
  NX[] = {25, 3, 3, 2, 3, 2, 3, 3, 25};    // elements per segment in x
EndIf
For j In {0:2}
  For i In {0:3}
    P[j * 4 + i] = newp; Point(P[j * 4 + i]) = {0, Y[i], j * h};
  EndFor
EndFor
For j In {0:2}
  For i In {0:2}
    LY[j * 3 + i] = newl; Line(LY[j * 3 + i]) = {P[j * 4 + i], P[j * 4 + i + 1]};
    Transfinite Curve{LY[j * 3 + i]} = NY[i];
  EndFor
EndFor
For j In {0:1}
  For i In {0:3}
    LZ[j * 4 + i] = newl; Line(LZ[j * 4 + i]) = {P[j * 4 + i], P[(j + 1) * 4 + i]};
    Transfinite Curve{LZ[j * 4 + i]} = NZ;
  EndFor
EndFor
For j In {0:1}
  For i In {0:2}
    cl = newll; Curve Loop(cl) = {LY[j * 3 + i], LZ[j * 4 + i + 1], -LY[(j + 1) * 3 + i], -LZ[j * 4 + i]};
    S[j * 3 + i] = news; Plane Surface(S[j * 3 + i]) = {cl};
    Transfinite Surface{S[j * 3 + i]}; Recombine Surface{S[j * 3 + i]};
  EndFor
EndFor
// extrude the six cells of the section segment by segment along x (hexahedra, conforming)
lower[] = {};  upper[] = {};
For s In {0:8}
  out[] = Extrude {X[s + 1] - X[s], 0, 0} { Surface{S[]}; Layers{NX[s]}; Recombine; };
  For k In {0:5}
    S[k] = out[k * 6];
    If (k < 3)
      lower[] += out[k * 6 + 1];
    Else
      upper[] += out[k * 6 + 1];
    EndIf
  EndFor
EndFor
// half 1: x < 300 mm and the lower lap (z < 12.7 mm); half 2: the upper lap and x > 420 mm
beam1[] = Volume In BoundingBox{-e, -e, -e, 0.420 + e, b + e, h + e};
beam1[] += Volume In BoundingBox{-e, -e, h - e, 0.300 + e, b + e, b + e};
beam2[] = Volume In BoundingBox{0.300 - e, -e, h - e, 0.720 + e, b + e, b + e};
beam2[] += Volume In BoundingBox{0.420 - e, -e, -e, 0.720 + e, b + e, h + e};
Physical Volume("beam1") = {beam1[]};
Physical Volume("beam2") = {beam2[]};
// the lap face both halves hold, the washer patches under the bolt heads (top, half 2) and nuts
// (bottom, half 1), the free ends
Physical Surface("interface") = Surface In BoundingBox{0.300 - e, -e, h - e, 0.420 + e, b + e, h + e};
xb[] = {0.330, 0.360, 0.390};
For k In {0:2}
  Physical Surface(Sprintf("head_%g", k + 1)) = Surface In BoundingBox{xb[k] - 0.008 - e, 4.7e-3 - e, b - e, xb[k] + 0.008 + e, 20.7e-3 + e, b + e};
  Physical Surface(Sprintf("nut_%g", k + 1)) = Surface In BoundingBox{xb[k] - 0.008 - e, 4.7e-3 - e, -e, xb[k] + 0.008 + e, 20.7e-3 + e, e};
EndFor
Physical Surface("end1") = Surface In BoundingBox{-e, -e, -e, e, b + e, b + e};
Physical Surface("end2") = Surface In BoundingBox{0.720 - e, -e, -e, 0.720 + e, b + e, b + e};
