// L-bracket for the fesub 3D example (lengths in m): a base plate 60 x 40 x 5 mm clamped at its
// x = 0 end face, and a flange 5 mm thick rising 35 mm from the base's far end. Two volumes share
// the interface face (a conforming mesh), so the bracket can be split into two substructures.
// Make the bundled mesh with:  gmsh bracket.geo -3 -order 2 -format msh22 -o bracket.msh
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 0.06, 0.04, 0.005};
Box(2) = {0.055, 0, 0.005, 0.005, 0.04, 0.035};
v() = BooleanFragments{ Volume{1}; Delete; }{ Volume{2}; Delete; };
e = 1e-6;
base() = Volume In BoundingBox{-e, -e, -e, 0.06 + e, 0.04 + e, 0.005 + e};
flange() = Volume In BoundingBox{0.055 - e, -e, 0.005 - e, 0.06 + e, 0.04 + e, 0.04 + e};
Physical Volume("base") = {base()};
Physical Volume("flange") = {flange()};
Physical Surface("clamp") = Surface In BoundingBox{-e, -e, -e, e, 0.04 + e, 0.005 + e};
Physical Surface("interface") = Surface In BoundingBox{0.055 - e, -e, 0.005 - e, 0.06 + e, 0.04 + e, 0.005 + e};
Physical Surface("tip") = Surface In BoundingBox{0.055 - e, -e, 0.04 - e, 0.06 + e, 0.04 + e, 0.04 + e};
Mesh.MeshSizeMax = 0.005;
