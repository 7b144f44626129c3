// Disc brake for the fesub brake study (lengths in m): an annular steel disc 10 mm thick, inner
// and outer diameters 250 and 350 mm (z from -5 to +5 mm, axis z), clamped at its hub (the inner
// rim), and two pads 15 mm thick on its two faces. Each pad is an annular sector spanning the
// radii 130-170 mm over 50 degrees (centred on the +x axis). Every part is a structured mesh of
// 8-node hexahedra (quadrangles extruded through the thickness); the disc is split into three
// sectors so that its faces under the pads (+-30 degrees, wider than the pads so that they may
// turn a little) are surfaces of their own. Parts are separate volumes with their own nodes.
// Make the bundled mesh with:  gmsh brake.geo -3 -format msh22 -o brake.msh
ri = 0.125;  ro = 0.175;  h = 0.010;      // disc radii and thickness
pr1 = 0.130; pr2 = 0.170; tp = 0.015;      // pad radii and thickness
pa = 25 * Pi / 180;                        // pad half angle
ca = 30 * Pi / 180;                        // half angle of the disc's contact sector
nr = 4;  nh = 2;                           // disc: elements across the radius, through the thickness
nc = 12; nf = 30;                          // disc: elements along the contact sector, along each other sector
pnr = 3; pnc = 6; pnh = 2;                 // pads: radius, arc, thickness

// ---- disc: centre point, and points at angles -ca, ca, pi on both radii (z = -h/2)
Point(1) = {0, 0, -h / 2};
a[] = {-ca, ca, Pi};
For i In {0:2}
  Point(10 + i) = {ri * Cos(a[i]), ri * Sin(a[i]), -h / 2};
  Point(20 + i) = {ro * Cos(a[i]), ro * Sin(a[i]), -h / 2};
EndFor
// arcs: contact sector (-ca..ca), then ca..pi and pi..-ca
Circle(1) = {10, 1, 11}; Circle(2) = {11, 1, 12}; Circle(3) = {12, 1, 10};
Circle(4) = {20, 1, 21}; Circle(5) = {21, 1, 22}; Circle(6) = {22, 1, 20};
Line(7) = {10, 20}; Line(8) = {11, 21}; Line(9) = {12, 22};
Curve Loop(1) = {7, 4, -8, -1}; Plane Surface(1) = {1};
Curve Loop(2) = {8, 5, -9, -2}; Plane Surface(2) = {2};
Curve Loop(3) = {9, 6, -7, -3}; Plane Surface(3) = {3};
Transfinite Curve{7, 8, 9} = nr + 1;
Transfinite Curve{1, 4} = nc + 1;
Transfinite Curve{2, 3, 5, 6} = nf + 1;
Transfinite Surface{1, 2, 3};
Recombine Surface{1, 2, 3};
d1[] = Extrude {0, 0, h} { Surface{1}; Layers{nh}; Recombine; };
d2[] = Extrude {0, 0, h} { Surface{2}; Layers{nh}; Recombine; };
d3[] = Extrude {0, 0, h} { Surface{3}; Layers{nh}; Recombine; };

// ---- pads: annular sectors -pa..pa, radii pr1..pr2; the top one from z = h/2 up, the bottom
// one from z = -h/2 down
Point(1030) = {pr1 * Cos(-pa), pr1 * Sin(-pa), h / 2}; Point(1031) = {pr1 * Cos(pa), pr1 * Sin(pa), h / 2};
Point(1032) = {pr2 * Cos(-pa), pr2 * Sin(-pa), h / 2}; Point(1033) = {pr2 * Cos(pa), pr2 * Sin(pa), h / 2};
Point(1034) = {0, 0, h / 2};
Circle(1031) = {1030, 1034, 1031}; Circle(1032) = {1032, 1034, 1033};
Line(1033) = {1030, 1032}; Line(1034) = {1031, 1033};
Curve Loop(1031) = {1033, 1032, -1034, -1031}; Plane Surface(1031) = {1031};
Point(1040) = {pr1 * Cos(-pa), pr1 * Sin(-pa), -h / 2}; Point(1041) = {pr1 * Cos(pa), pr1 * Sin(pa), -h / 2};
Point(1042) = {pr2 * Cos(-pa), pr2 * Sin(-pa), -h / 2}; Point(1043) = {pr2 * Cos(pa), pr2 * Sin(pa), -h / 2};
Point(1044) = {0, 0, -h / 2};
Circle(1041) = {1040, 1044, 1041}; Circle(1042) = {1042, 1044, 1043};
Line(1043) = {1040, 1042}; Line(1044) = {1041, 1043};
Curve Loop(1041) = {1043, 1042, -1044, -1041}; Plane Surface(1041) = {1041};
Transfinite Curve{1031, 1032, 1041, 1042} = pnc + 1;
Transfinite Curve{1033, 1034, 1043, 1044} = pnr + 1;
Transfinite Surface{1031, 1041};
Recombine Surface{1031, 1041};
pt[] = Extrude {0, 0, tp} { Surface{1031}; Layers{pnh}; Recombine; };
pb[] = Extrude {0, 0, -tp} { Surface{1041}; Layers{pnh}; Recombine; };

// ---- physical groups (extrusion returns: [0] the top surface, [1] the volume, [2..] the sides
// in the order of the source surface's curves)
Physical Volume("disc") = {d1[1], d2[1], d3[1]};
Physical Volume("pad_top") = {pt[1]};
Physical Volume("pad_bottom") = {pb[1]};
Physical Surface("hub") = {d1[5], d2[5], d3[5]};
Physical Surface("disc_top_contact") = {d1[0]};
Physical Surface("disc_bottom_contact") = {1};
Physical Surface("pad_top_contact") = {1031};
Physical Surface("pad_top_back") = {pt[0]};
Physical Surface("pad_bottom_contact") = {1041};
Physical Surface("pad_bottom_back") = {pb[0]};
Mesh.ElementOrder = 1;
